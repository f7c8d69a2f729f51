// Thin typed access to yajl: a document (yajl_tree), a lazily rendered JSON
// path for error messages ("linux.namespaces[2].type"), typed field readers
// that fail with that path, and a writer over yajl_gen.
#pragma once

#include "error.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_tree.h>

namespace ocirun::json {

// A JSON path, built on the stack as the reader descends and rendered only
// when an error needs it.
struct Path {
    const Path *parent = nullptr;
    const char *key = nullptr; // object member, or nullptr for an array index
    size_t index = 0;

    Path field(const char *k) const { return Path{this, k, 0}; }
    Path at(size_t i) const { return Path{this, nullptr, i}; }
    std::string str() const;
};

// An error naming the path: "linux.namespaces[2].type: unknown namespace ...".
std::unexpected<Error> fail_at(const Path &p, std::string_view what);

// Arrays and objects nested deeper than this are refused by Document::parse
// (yajl's parser grows its stack of levels in small steps); OCI documents
// use fewer than ten levels.
inline constexpr size_t kMaxDepth = 512;

// A parsed document: yajl's parser, with the tree (yajl_tree.h's nodes, so
// the readers below and YAJL_* macros apply) built from its callbacks in
// one arena the document owns and frees at once.
class Document {
  public:
    // Parse text; a syntax error or nesting deeper than kMaxDepth names line
    // and column, a key twice in one object its path.
    static Result<Document> parse(std::string_view text);
    yajl_val root() const { return root_; }

    Document() = default;
    Document(Document &&o) noexcept : root_(o.root_), blocks_(o.blocks_) {
        o.root_ = nullptr;
        o.blocks_ = nullptr;
    }
    Document &operator=(Document &&o) noexcept;
    Document(const Document &) = delete;
    Document &operator=(const Document &) = delete;
    ~Document();

  private:
    friend struct TreeBuilder;
    yajl_val root_ = nullptr;
    void *blocks_ = nullptr; // the arena's blocks, each starting with the next's address
};

// Member lookup; nullptr when absent or JSON null (null means unset).
yajl_val member(yajl_val obj, const char *key);

// Room in `out` for one element per item of the array member `key` (none
// when it is absent or not an array: the reader reports that), so that a
// reader appending them allocates once.
template <class T> void reserve_for(yajl_val obj, const char *key, std::vector<T> &out) {
    yajl_val v = member(obj, key);
    if (v && YAJL_IS_ARRAY(v)) out.reserve(out.size() + v->u.array.len);
}

Result<yajl_val> as_object(yajl_val v, const Path &p);
Result<yajl_val> as_array(yajl_val v, const Path &p);

// Typed readers for a member `key` of object `obj` (whose path is `p`).
// The *_opt forms leave `out` untouched when the member is absent.
Status get_string(yajl_val obj, const Path &p, const char *key, std::string &out,
                  bool required = false);
Status get_bool(yajl_val obj, const Path &p, const char *key, bool &out);
Status get_bool_opt(yajl_val obj, const Path &p, const char *key, std::optional<bool> &out);
Status get_strings(yajl_val obj, const Path &p, const char *key, std::vector<std::string> &out,
                   bool required = false);
Status get_string_map(yajl_val obj, const Path &p, const char *key,
                      std::map<std::string, std::string> &out);

// `f(object, path)` for each element of the array member `key` (absent:
// none), each checked to be an object; the first error stops.
template <class F> Status for_each_object(yajl_val obj, const Path &p, const char *key, F f) {
    yajl_val arr = member(obj, key);
    if (!arr) return {};
    Path ap = p.field(key);
    OCI_TRY(as_array(arr, ap));
    for (size_t i = 0; i < arr->u.array.len; i++) {
        Path ip = ap.at(i);
        yajl_val o = OCI_TRY(as_object(arr->u.array.values[i], ip));
        OCI_CHECK(f(o, ip));
    }
    return {};
}

// Integers are checked against [lo, hi] and must be whole numbers.
Result<int64_t> to_int(yajl_val v, const Path &p, int64_t lo, int64_t hi);
Result<uint64_t> to_uint(yajl_val v, const Path &p, uint64_t hi);

template <class T>
Status get_int(yajl_val obj, const Path &p, const char *key, T &out, int64_t lo, int64_t hi,
               bool required = false) {
    yajl_val v = member(obj, key);
    if (!v) {
        if (required) return fail_at(p.field(key), "required field is missing");
        return {};
    }
    out = static_cast<T>(OCI_TRY(to_int(v, p.field(key), lo, hi)));
    return {};
}

template <class T>
Status get_int_opt(yajl_val obj, const Path &p, const char *key, std::optional<T> &out, int64_t lo,
                   int64_t hi) {
    yajl_val v = member(obj, key);
    if (!v) return {};
    out = static_cast<T>(OCI_TRY(to_int(v, p.field(key), lo, hi)));
    return {};
}

template <class T>
Status get_uint(yajl_val obj, const Path &p, const char *key, T &out, uint64_t hi,
                bool required = false) {
    yajl_val v = member(obj, key);
    if (!v) {
        if (required) return fail_at(p.field(key), "required field is missing");
        return {};
    }
    out = static_cast<T>(OCI_TRY(to_uint(v, p.field(key), hi)));
    return {};
}

template <class T>
Status get_uint_opt(yajl_val obj, const Path &p, const char *key, std::optional<T> &out,
                    uint64_t hi) {
    yajl_val v = member(obj, key);
    if (!v) return {};
    out = static_cast<T>(OCI_TRY(to_uint(v, p.field(key), hi)));
    return {};
}

// Calls fn(element, element_path, index) for each element of array member `key`.
template <class F>
Status each(yajl_val obj, const Path &p, const char *key, F &&fn, bool required = false) {
    yajl_val v = member(obj, key);
    Path kp = p.field(key);
    if (!v) {
        if (required) return fail_at(kp, "required field is missing");
        return {};
    }
    yajl_val arr = OCI_TRY(as_array(v, kp));
    for (size_t i = 0; i < arr->u.array.len; i++) {
        Path ip = kp.at(i);
        OCI_CHECK(fn(arr->u.array.values[i], ip, i));
    }
    return {};
}

// Calls fn(key, value, value_path) for each member of object member `key`.
template <class F> Status each_member(yajl_val obj, const Path &p, const char *key, F &&fn) {
    yajl_val v = member(obj, key);
    Path kp = p.field(key);
    if (!v) return {};
    yajl_val o = OCI_TRY(as_object(v, kp));
    for (size_t i = 0; i < o->u.object.len; i++) {
        Path mp = kp.field(o->u.object.keys[i]);
        OCI_CHECK(fn(o->u.object.keys[i], o->u.object.values[i], mp));
    }
    return {};
}

// Writer: a thin RAII wrapper over yajl_gen with typed helpers.
class Writer {
  public:
    explicit Writer(bool pretty = false);
    ~Writer();
    Writer(const Writer &) = delete;
    Writer &operator=(const Writer &) = delete;

    Writer &begin_object();
    Writer &end_object();
    Writer &begin_array();
    Writer &end_array();
    Writer &key(std::string_view k);
    // Bytes that are not valid UTF-8 are written as U+FFFD, one per byte,
    // and counted in replaced(): what the runtime writes is valid JSON.
    Writer &str(std::string_view s);
    Writer &boolean(bool b);
    Writer &i64(int64_t v);
    Writer &u64(uint64_t v);
    Writer &null();

    // Member helpers.
    Writer &kv(std::string_view k, std::string_view v) { return key(k).str(v); }
    Writer &kv(std::string_view k, const char *v) { return key(k).str(v); }
    Writer &kv_bool(std::string_view k, bool v) { return key(k).boolean(v); }
    Writer &kv_i64(std::string_view k, int64_t v) { return key(k).i64(v); }
    Writer &kv_u64(std::string_view k, uint64_t v) { return key(k).u64(v); }
    Writer &kv_strings(std::string_view k, const std::vector<std::string> &v);
    Writer &kv_map(std::string_view k, const std::map<std::string, std::string> &m);
    // Omitted when empty / unset.
    Writer &opt_str(std::string_view k, std::string_view v) { return v.empty() ? *this : kv(k, v); }
    Writer &opt_strings(std::string_view k, const std::vector<std::string> &v) {
        return v.empty() ? *this : kv_strings(k, v);
    }
    Writer &opt_map(std::string_view k, const std::map<std::string, std::string> &m) {
        return m.empty() ? *this : kv_map(k, m);
    }
    template <class T> Writer &opt_int(std::string_view k, const std::optional<T> &v) {
        if (!v) return *this;
        if constexpr (std::is_signed_v<T>)
            return kv_i64(k, *v);
        else
            return kv_u64(k, *v);
    }
    Writer &opt_bool(std::string_view k, const std::optional<bool> &v) {
        return v ? kv_bool(k, *v) : *this;
    }

    // The document written so far (valid once every container is closed).
    std::string_view view() const;
    // Invalid UTF-8 bytes replaced so far (str()).
    size_t replaced() const { return replaced_; }

  private:
    yajl_gen g_;
    bool pretty_;
    size_t replaced_ = 0;
};

} // namespace ocirun::json
