// json::Document: the tree built from yajl's callbacks into the document's
// arena, node by node as yajl_tree.h describes it (the readers and the
// YAJL_* macros rely on that), numbers flagged as yajl_tree flags them, and
// documents larger than the arena's first block.
#include "oci/json.hpp"

#include <criterion/criterion.h>

#include <string>
#include <utility>

using namespace ocirun;

namespace {

json::Document parsed(const std::string &text) {
    auto d = json::Document::parse(text);
    cr_assert(d.has_value(), "%s: %s", text.c_str(), d ? "" : d.error().msg.c_str());
    return std::move(*d);
}

} // namespace

Test(json, tree_has_yajl_tree_shape) {
    json::Document d =
        parsed(R"({"a": [1, "two", true, false, null, {}, []], "b\u0041": {"c": "d"}})");
    yajl_val top = d.root();
    cr_assert(YAJL_IS_OBJECT(top));
    cr_assert_eq(top->u.object.len, 2u);
    cr_assert_str_eq(top->u.object.keys[0], "a");
    cr_assert_str_eq(top->u.object.keys[1], "bA"); // the escape decoded, as yajl_tree
    yajl_val a = top->u.object.values[0];
    cr_assert(YAJL_IS_ARRAY(a));
    cr_assert_eq(a->u.array.len, 7u);
    cr_assert(YAJL_IS_INTEGER(a->u.array.values[0]));
    cr_assert_eq(YAJL_GET_INTEGER(a->u.array.values[0]), 1);
    cr_assert_str_eq(YAJL_GET_STRING(a->u.array.values[1]), "two");
    cr_assert(YAJL_IS_TRUE(a->u.array.values[2]));
    cr_assert(YAJL_IS_FALSE(a->u.array.values[3]));
    cr_assert(YAJL_IS_NULL(a->u.array.values[4]));
    cr_assert(YAJL_IS_OBJECT(a->u.array.values[5]));
    cr_assert_eq(a->u.array.values[5]->u.object.len, 0u);
    cr_assert(YAJL_IS_ARRAY(a->u.array.values[6]));
    cr_assert_eq(a->u.array.values[6]->u.array.len, 0u);
    yajl_val b = json::member(top, "bA");
    cr_assert(YAJL_IS_OBJECT(b));
    cr_assert_str_eq(YAJL_GET_STRING(json::member(b, "c")), "d");
}

Test(json, numbers_flagged_as_yajl_tree_flags_them) {
    json::Document d =
        parsed(R"([-42, 5.5, 1e3, 9223372036854775807, 18446744073709551615, -0, 0.0])");
    yajl_val *v = d.root()->u.array.values;
    cr_assert(YAJL_IS_INTEGER(v[0]));
    cr_assert_eq(YAJL_GET_INTEGER(v[0]), -42);
    cr_assert(!YAJL_IS_INTEGER(v[1])); // not an integer's text
    cr_assert(YAJL_IS_DOUBLE(v[1]));
    cr_assert_float_eq(YAJL_GET_DOUBLE(v[1]), 5.5, 1e-12);
    cr_assert(!YAJL_IS_INTEGER(v[2]));
    cr_assert(YAJL_IS_DOUBLE(v[2]));
    cr_assert(YAJL_IS_INTEGER(v[3]));
    cr_assert_eq(YAJL_GET_INTEGER(v[3]), 9223372036854775807LL);
    cr_assert(!YAJL_IS_INTEGER(v[4])); // past long long: only the raw text (the readers' source)
    cr_assert_str_eq(YAJL_GET_NUMBER(v[4]), "18446744073709551615");
    cr_assert(YAJL_IS_INTEGER(v[5]));
    cr_assert_eq(YAJL_GET_INTEGER(v[5]), 0);
    cr_assert(!YAJL_IS_INTEGER(v[6]));
    // The typed reader works from the text, as before.
    json::Path p;
    auto big = json::to_uint(v[4], p, UINT64_MAX);
    cr_assert(big.has_value());
    cr_assert_eq(*big, UINT64_MAX);
}

Test(json, document_larger_than_the_first_block) {
    // 20,000 one-digit numbers and as many short strings in nested objects:
    // far more nodes than three bytes of arena per byte of text hold.
    std::string text = "[";
    for (int i = 0; i < 20000; i++)
        text += (i ? "," : "") + std::string("{\"k\":") + std::to_string(i % 10) + ",\"s\":\"x\"}";
    text += "]";
    json::Document d = parsed(text);
    yajl_val top = d.root();
    cr_assert_eq(top->u.array.len, 20000u);
    for (size_t i = 0; i < top->u.array.len; i++) {
        yajl_val o = top->u.array.values[i];
        cr_assert_eq(YAJL_GET_INTEGER(json::member(o, "k")), static_cast<long long>(i % 10));
        cr_assert_str_eq(YAJL_GET_STRING(json::member(o, "s")), "x");
    }
    // Moved, the tree goes with it (the arena is freed once, by the owner).
    json::Document moved = std::move(d);
    cr_assert_null(d.root());
    cr_assert_eq(moved.root()->u.array.len, 20000u);
    d = std::move(moved);
    cr_assert_eq(d.root()->u.array.len, 20000u);
}

Test(json, errors_still_named_where_they_are) {
    auto d = json::Document::parse("{\"a\": [1, 2,, 3]}");
    cr_assert(!d.has_value());
    cr_assert_str_eq(d.error().msg.c_str(),
                     "invalid JSON: line 1, column 13: unallowed token at this point in JSON text");
    auto dup = json::Document::parse(R"({"a": {"b": 1, "b": 2}})");
    cr_assert(!dup.has_value());
    cr_assert_str_eq(dup.error().msg.c_str(), "a.b: duplicate key: the object names it twice");
}

// The end of a document (parse stops at the closed top-level value, with
// the trailing white space cut off): white space after it is taken, anything
// else refused, and an unclosed or empty text still fails.
Test(json, what_follows_the_top_level_value) {
    cr_assert_eq(parsed("{\"a\": 1} \n\t\r\n").root()->u.object.len, 1u);
    cr_assert_eq(parsed("[1, 2]").root()->u.array.len, 2u);
    cr_assert_eq(YAJL_GET_INTEGER(parsed(" 42 \n").root()), 42);
    cr_assert(YAJL_IS_TRUE(parsed("true\n").root()));
    for (const char *bad : {"{} x", "{}{}", "[1] [2]", "{} // c", "{\"a\": 1", "[1,", "", " \n",
                            "42 43", "{}\n,"}) {
        auto d = json::Document::parse(bad);
        cr_assert(!d.has_value(), "\"%s\" was taken", bad);
    }
}
