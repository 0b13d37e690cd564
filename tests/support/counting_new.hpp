// Replaces the global allocation functions of a test executable so that a test can count the
// allocations made while `armed` is true. Include from exactly ONE source file of an executable
// (a second copy of the replacements is a link error).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

// GCC pairs the replaced operator new with the std::free in the replaced delete and warns; they are
// the matching pair by construction here. The warning goes off for the rest of the translation unit:
// in the unity build of the tests (ADR 0019), for the files of the folder that come after this one.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<bool> armed{false};
std::atomic<long> allocations{0};
// When a count is not 0, `gdb -ex 'break alloc_hook'` shows where the allocation came from.
[[gnu::noinline]] void alloc_hook() { asm volatile(""); }
void count_allocation() noexcept {
  if (armed.load(std::memory_order_relaxed)) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    alloc_hook();
  }
}
}  // namespace

void* operator new(std::size_t n) {
  count_allocation();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form this
// executable's code can reach must come from the same malloc that the replaced delete frees.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  count_allocation();
  return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
