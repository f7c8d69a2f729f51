// Precompiled for the test executables (meson cpp_pch): the headers nearly
// every suite includes and that take most of a test file's compile time.
// Only standard and Criterion headers: a file still includes what it uses.
#include <criterion/criterion.h>

#include <algorithm>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>
