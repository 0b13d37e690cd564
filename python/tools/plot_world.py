#!/usr/bin/env python3
"""Latency vs load per profile for the seed's world (issue 17).

Reads the JSON of `gpusched-sim --scenario data/scenarios/seed-world.yaml ... --json` and plots, per
service, the peak hour's P99 at every load the capacity sweep evaluated (offered load = multiplier x
the service's mean rate), one colour per profile, every seed's points, with the SLO as a line.

    python3 python/tools/plot_world.py world.json -o docs/img/world-latency-vs-load.png \
        --scenario data/scenarios/seed-world.yaml
"""
import argparse
import json
import sys


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", help="gpusched-sim --json output of a world scenario")
    ap.add_argument("-o", "--output", required=True, help="PNG to write")
    ap.add_argument("--scenario", help="the scenario YAML, for the mean rates and SLOs (else the x axis is the multiplier)")
    a = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(a.json) as f:
        doc = json.load(f)
    if doc.get("kind") != "world_ab":
        sys.exit("error: %s: not a world A/B result (kind %r)" % (a.json, doc.get("kind")))
    rates, slos = {}, {}
    if a.scenario:
        import yaml

        with open(a.scenario) as f:
            sc = yaml.safe_load(f)
        for s in sc["services"]:
            rates[s["name"]] = float(s["arrivals"]["rate_qps"])
            slos[s["name"]] = float(s["slo_ms"])
    services = doc["services"]
    fig, axes = plt.subplots(1, len(services), figsize=(5.5 * len(services), 4.2), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, svc in enumerate(services):
        ax = axes[0][k]
        for i, prof in enumerate(doc["profiles"]):
            xs, ys = [], []
            for run in doc["results"][prof][svc]["sweep"]:
                for f, p99 in run["points"]:
                    if f == 0 or p99 is None:
                        continue
                    xs.append(f * rates.get(svc, 1.0))
                    ys.append(p99)
            ax.scatter(xs, ys, s=14, alpha=0.7, color=colours[i % len(colours)], label=prof)
        if svc in slos:
            ax.axhline(slos[svc], color="k", lw=0.8, ls="--", label="SLO %g ms" % slos[svc])
        if svc in rates:
            ax.axvline(rates[svc], color="grey", lw=0.8, ls=":", label="declared load")
        ax.set_yscale("log")
        ax.set_xlabel("offered load, mean QPS" if svc in rates else "load multiplier")
        ax.set_ylabel("P99 latency at the peak hour, ms")
        ax.set_title(svc)
        ax.legend(fontsize=8)
    fig.suptitle("%s: latency vs load (capacity sweep points, seeds %s)" % (doc["scenario"], ",".join(map(str, doc["seeds"]))))
    fig.tight_layout()
    fig.savefig(a.output, dpi=90)
    return 0


if __name__ == "__main__":
    sys.exit(main())
