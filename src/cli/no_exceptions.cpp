// The product is built with -fno-exceptions, and nothing it links catches
// one: an exception thrown inside libstdc++ (std::length_error from a string
// past max_size(), say) ends the process in std::terminate. libstdc++'s own
// __cxa_allocate_exception comes with an emergency pool that it mallocs at
// start-up, 72 KiB in every oci-run process (of the 261 KB a `create` asked
// of malloc, measured with bench/heap_count); defining the allocation entry
// points here keeps that object, and its pool, out of the link. A throw then
// ends the process here, with a line that says so, as it would have ended in
// std::terminate.
#include <cstddef>
#include <cstdio>
#include <cstdlib>

namespace {

[[noreturn]] void thrown() {
    static const char msg[] = "oci-run: internal error: a C++ exception was thrown\n";
    (void)!std::fwrite(msg, 1, sizeof msg - 1, stderr);
    std::abort();
}

} // namespace

extern "C" {

void *__cxa_allocate_exception(std::size_t) noexcept {
    thrown();
}

void __cxa_free_exception(void *) noexcept {
    thrown();
}

void *__cxa_allocate_dependent_exception() noexcept {
    thrown();
}

void __cxa_free_dependent_exception(void *) noexcept {
    thrown();
}

} // extern "C"
