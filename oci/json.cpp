#include "json.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <yajl/yajl_parse.h>

namespace ocirun::json {

std::string Path::str() const {
    std::vector<const Path *> chain;
    for (const Path *p = this; p && p->parent; p = p->parent)
        chain.push_back(p);
    std::string out;
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
        const Path *p = *it;
        if (p->key) {
            if (!out.empty()) out += '.';
            out += p->key;
        } else {
            out += '[';
            out += std::to_string(p->index);
            out += ']';
        }
    }
    return out.empty() ? std::string("(document)") : out;
}

std::unexpected<Error> fail_at(const Path &p, std::string_view what) {
    std::string msg = p.str();
    msg += ": ";
    msg += what;
    return fail(std::move(msg));
}

namespace {

// Stream-parse text[0, n) without callbacks and without comments. Returns
// the status; `msg` gets yajl's explanation on error.
yajl_status stream_parse(std::string_view text, size_t n, bool complete, std::string *msg) {
    yajl_handle h = yajl_alloc(nullptr, nullptr, nullptr);
    if (!h) return yajl_status_error;
    yajl_config(h, yajl_allow_comments, 0);
    auto *buf = reinterpret_cast<const unsigned char *>(text.data());
    yajl_status st = yajl_parse(h, buf, n);
    if (st == yajl_status_ok && complete) st = yajl_complete_parse(h);
    if (st != yajl_status_ok && msg) {
        unsigned char *e = yajl_get_error(h, 0, buf, n);
        if (e) {
            *msg = reinterpret_cast<char *>(e);
            yajl_free_error(h, e);
        }
    }
    yajl_free(h);
    return st;
}

// Where the offending token starts. yajl reports an error once the token is
// complete, so the shortest failing prefix ends at the token's last byte;
// from there step back to its first byte (the opening quote of a string,
// the first character of a number or literal).
size_t error_offset(std::string_view text) {
    size_t lo = 1, hi = text.size(), end = text.size();
    while (lo <= hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (stream_parse(text, mid, false, nullptr) != yajl_status_ok) {
            end = mid;
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    if (end == text.size() && stream_parse(text, end, false, nullptr) == yajl_status_ok)
        return text.size(); // premature end of input: the error is at the end
    size_t p = end - 1;
    if (text[p] == '"') {
        // Find the opening quote: the previous quote not escaped by an odd
        // number of backslashes.
        size_t q = p;
        while (q > 0) {
            q--;
            if (text[q] != '"') continue;
            size_t bs = 0;
            while (q >= bs + 1 && text[q - bs - 1] == '\\')
                bs++;
            if (bs % 2 == 0) return q;
        }
        return p;
    }
    auto word = [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '+' || c == '-';
    };
    while (p > 0 && word(text[p]) && word(text[p - 1]))
        p--;
    return p;
}

} // namespace

// "invalid JSON: line L, column C: WHAT" for the byte at `off`.
static std::unexpected<Error> fail_at_offset(std::string_view text, size_t off,
                                             const std::string &what) {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < off && i < text.size(); i++) {
        if (text[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    char pos[64];
    std::snprintf(pos, sizeof pos, "line %zu, column %zu: ", line, col);
    return fail("invalid JSON: " + std::string(pos) + what);
}

// yajl says what is wrong but not where: on an error the offending token is
// located and its line and column counted.
// `complete`: the text is the whole document (else a prefix of it, which may
// end anywhere).
static Status check_syntax(std::string_view text, bool complete) {
    std::string what = "invalid JSON";
    if (stream_parse(text, text.size(), complete, &what) == yajl_status_ok) return {};
    if (what.rfind("parse error: ", 0) == 0) what.erase(0, 13);
    while (!what.empty() && (what.back() == '\n' || what.back() == ' '))
        what.pop_back();
    return fail_at_offset(text, error_offset(text), what);
}

// The offset of the first bracket nested deeper than kMaxDepth, or npos.
// The readers and the duplicate-key check recurse once per level of
// nesting, so a document of a few MB of "[" (config.json may be 16 MiB)
// would overflow the stack; and yajl's parser grows its own stack of levels
// 128 bytes at a time (quadratic where realloc copies: 22 s for a million
// levels under ASan). No OCI document comes near this depth. This scan comes
// before yajl's, so the text may be invalid; where it is valid up to the
// offset, every bracket counted is structure.
static size_t too_deep_at(std::string_view text) {
    size_t depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < text.size(); i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxDepth) return i;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return std::string_view::npos;
}

namespace {

bool identifier(std::string_view k) {
    if (k.empty()) return false;
    for (char c : k)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
    return true;
}

// The first object (depth first) holding a key twice, as the key's path:
// yajl's tree keeps both members, and a reader taking the first would see
// another value than one taking the last (a reviewer reads one, the runtime
// would apply the other).
Status no_duplicate_keys(yajl_val v, const Path &p) {
    if (YAJL_IS_ARRAY(v)) {
        for (size_t i = 0; i < v->u.array.len; i++)
            OCI_CHECK(no_duplicate_keys(v->u.array.values[i], p.at(i)));
        return {};
    }
    if (!YAJL_IS_OBJECT(v)) return {};
    // The first key, in document order, that an earlier member already named.
    size_t n = v->u.object.len, dup = n;
    auto key = [&](size_t i) { return std::string_view(v->u.object.keys[i]); };
    if (n <= 32) { // most objects: compared in place, nothing allocated
        for (size_t i = 1; i < n && dup == n; i++)
            for (size_t j = 0; j < i; j++)
                if (key(j) == key(i)) {
                    dup = i;
                    break;
                }
    } else { // sorted by key then position: a key's second member is a duplicate
        std::vector<size_t> order(n);
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        std::sort(order.begin(), order.end(),
                  [&](size_t a, size_t b) { return key(a) != key(b) ? key(a) < key(b) : a < b; });
        for (size_t i = 1; i < n; i++)
            if (key(order[i - 1]) == key(order[i])) dup = std::min(dup, order[i]);
    }
    if (dup < n) {
        std::string_view k = key(dup);
        std::string at = p.parent ? p.str() : "";
        at += identifier(k) ? (at.empty() ? "" : ".") + std::string(k)
                            : "[\"" + std::string(k) + "\"]";
        return fail(at + ": duplicate key: the object names it twice");
    }
    for (size_t i = 0; i < v->u.object.len; i++)
        OCI_CHECK(no_duplicate_keys(v->u.object.values[i], p.field(v->u.object.keys[i])));
    return {};
}

} // namespace

// The tree, built from yajl's callbacks. Nodes, strings and member arrays
// come from an arena: blocks of at least kBlock bytes (the first sized from
// the text, about what a configuration's tree takes), freed together with
// the document. A container's members are gathered on a stack shared by all
// open containers and copied into the arena, exactly sized, when it closes.
struct TreeBuilder {
    Document &doc;
    char *next = nullptr; // free space in the newest block
    size_t left = 0;
    size_t block = 0; // the size of the next block
    std::vector<yajl_val> values;
    std::vector<char *> keys;
    struct Open {
        yajl_val v;
        size_t first_value, first_key;
    };
    std::vector<Open> open;

    static constexpr size_t kBlock = 4096;

    explicit TreeBuilder(Document &d) : doc(d) {}

    void *take(size_t n, size_t align) {
        size_t pad = (align - reinterpret_cast<uintptr_t>(next) % align) % align;
        if (!next || pad + n > left) {
            size_t size = std::max(block, n + sizeof(void *) + align);
            block = std::max(kBlock, 2 * size);
            auto *b = static_cast<char *>(std::malloc(size));
            if (!b) std::abort(); // as operator new without exceptions
            *reinterpret_cast<void **>(b) = doc.blocks_;
            doc.blocks_ = b;
            next = b + sizeof(void *);
            left = size - sizeof(void *);
            pad = (align - reinterpret_cast<uintptr_t>(next) % align) % align;
        }
        void *out = next + pad;
        next += pad + n;
        left -= pad + n;
        return out;
    }
    char *copy(const char *s, size_t n) {
        auto *out = static_cast<char *>(take(n + 1, 1));
        std::memcpy(out, s, n);
        out[n] = '\0';
        return out;
    }
    yajl_val node(yajl_type t) {
        auto *v = static_cast<yajl_val>(take(sizeof(yajl_val_s), alignof(yajl_val_s)));
        std::memset(v, 0, sizeof *v);
        v->type = t;
        if (open.empty())
            doc.root_ = v;
        else
            values.push_back(v);
        return v;
    }
    template <class T> T *array_of(const std::vector<T> &from, size_t first) {
        size_t n = from.size() - first;
        if (n == 0) return nullptr;
        auto *out = static_cast<T *>(take(n * sizeof(T), alignof(T)));
        std::memcpy(out, from.data() + first, n * sizeof(T));
        return out;
    }
    int start(yajl_type t) {
        yajl_val v = node(t);
        open.push_back({v, values.size(), keys.size()});
        return 1;
    }
    int end() {
        Open o = open.back();
        open.pop_back();
        size_t n = values.size() - o.first_value;
        if (o.v->type == yajl_t_object) {
            o.v->u.object.keys = const_cast<const char **>(array_of(keys, o.first_key));
            o.v->u.object.values = array_of(values, o.first_value);
            o.v->u.object.len = n;
            keys.resize(o.first_key);
        } else {
            o.v->u.array.values = array_of(values, o.first_value);
            o.v->u.array.len = n;
        }
        values.resize(o.first_value);
        return 1;
    }

    static TreeBuilder &of(void *ctx) { return *static_cast<TreeBuilder *>(ctx); }
    static int on_null(void *c) { return of(c).node(yajl_t_null), 1; }
    static int on_bool(void *c, int b) { return of(c).node(b ? yajl_t_true : yajl_t_false), 1; }
    static int on_number(void *c, const char *s, size_t n) {
        TreeBuilder &t = of(c);
        yajl_val v = t.node(yajl_t_number);
        v->u.number.r = t.copy(s, n);
        // As yajl_tree: the integer when the text is one that fits (digits
        // after an optional sign), the double when strtod takes it whole.
        const char *d = v->u.number.r + (*v->u.number.r == '-');
        bool digits = *d != '\0';
        for (const char *q = d; *q; q++)
            digits = digits && *q >= '0' && *q <= '9';
        errno = 0;
        char *end = nullptr;
        long long i = digits ? std::strtoll(v->u.number.r, &end, 10) : 0;
        if (digits && errno == 0) {
            v->u.number.i = i;
            v->u.number.flags |= YAJL_NUMBER_INT_VALID;
        }
        errno = 0;
        end = nullptr;
        v->u.number.d = std::strtod(v->u.number.r, &end);
        if (errno == 0 && end && *end == '\0') v->u.number.flags |= YAJL_NUMBER_DOUBLE_VALID;
        return 1;
    }
    static int on_string(void *c, const unsigned char *s, size_t n) {
        TreeBuilder &t = of(c);
        t.node(yajl_t_string)->u.string = t.copy(reinterpret_cast<const char *>(s), n);
        return 1;
    }
    static int on_key(void *c, const unsigned char *s, size_t n) {
        TreeBuilder &t = of(c);
        t.keys.push_back(t.copy(reinterpret_cast<const char *>(s), n));
        return 1;
    }
    static int on_start_map(void *c) { return of(c).start(yajl_t_object); }
    static int on_start_array(void *c) { return of(c).start(yajl_t_array); }
    static int on_end(void *c) { return of(c).end(); }
};

Result<Document> Document::parse(std::string_view text) {
    if (text.find('\0') != std::string_view::npos) return fail("invalid JSON: contains a NUL byte");
    // yajl checks no more than the text up to a bracket too deep: a syntax
    // error before it is the one reported, else the depth.
    size_t deep = too_deep_at(text);
    if (deep != std::string_view::npos) {
        OCI_CHECK(check_syntax(text.substr(0, deep + 1), false));
        return fail_at_offset(text, deep,
                              "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    static const yajl_callbacks kTree = {
        TreeBuilder::on_null,
        TreeBuilder::on_bool,
        nullptr,
        nullptr,
        TreeBuilder::on_number,
        TreeBuilder::on_string,
        TreeBuilder::on_start_map,
        TreeBuilder::on_key,
        TreeBuilder::on_end,
        TreeBuilder::on_start_array,
        TreeBuilder::on_end,
    };
    Document d;
    TreeBuilder t{d};
    t.block = std::clamp<size_t>(3 * text.size(), TreeBuilder::kBlock, 256 * 1024);
    t.values.reserve(32);
    t.keys.reserve(32);
    t.open.reserve(8);
    yajl_handle h = yajl_alloc(&kTree, nullptr, &t);
    if (!h) return fail("invalid JSON: out of memory");
    yajl_config(h, yajl_allow_comments, 0);
    // Without the trailing white space, and without yajl_complete_parse once
    // the top-level object or array has closed: both make yajl's lexer
    // buffer what is left (none of it a token), a 2 KiB allocation. What
    // follows the closed value in the text is still lexed, and refused
    // unless it is white space.
    std::string_view body = text.substr(0, text.find_last_not_of(" \t\r\n") + 1);
    yajl_status st =
        yajl_parse(h, reinterpret_cast<const unsigned char *>(body.data()), body.size());
    bool closed = d.root_ && t.open.empty() &&
                  (d.root_->type == yajl_t_object || d.root_->type == yajl_t_array);
    if (st == yajl_status_ok && !closed) st = yajl_complete_parse(h);
    yajl_free(h);
    if (st != yajl_status_ok || !d.root_) {
        OCI_CHECK(check_syntax(text, true)); // the error located and explained
        return fail("invalid JSON");
    }
    OCI_CHECK(no_duplicate_keys(d.root_, Path{}));
    return d;
}

Document &Document::operator=(Document &&o) noexcept {
    if (this != &o) {
        this->~Document();
        root_ = o.root_;
        blocks_ = o.blocks_;
        o.root_ = nullptr;
        o.blocks_ = nullptr;
    }
    return *this;
}

Document::~Document() {
    while (blocks_) {
        void *b = blocks_;
        blocks_ = *static_cast<void **>(b);
        std::free(b);
    }
    root_ = nullptr;
}

yajl_val member(yajl_val obj, const char *key) {
    if (!obj || !YAJL_IS_OBJECT(obj)) return nullptr;
    // The last occurrence wins, as in Go's encoding/json that runc uses.
    yajl_val found = nullptr;
    for (size_t i = 0; i < obj->u.object.len; i++)
        if (std::strcmp(obj->u.object.keys[i], key) == 0) found = obj->u.object.values[i];
    if (found && YAJL_IS_NULL(found)) return nullptr;
    return found;
}

static const char *type_name(yajl_val v) {
    if (YAJL_IS_STRING(v)) return "a string";
    if (YAJL_IS_NUMBER(v)) return "a number";
    if (YAJL_IS_OBJECT(v)) return "an object";
    if (YAJL_IS_ARRAY(v)) return "an array";
    if (YAJL_IS_TRUE(v) || YAJL_IS_FALSE(v)) return "a boolean";
    return "null";
}

static std::unexpected<Error> wrong_type(const Path &p, yajl_val v, const char *want) {
    return fail_at(p, std::string("expected ") + want + ", got " + type_name(v));
}

Result<yajl_val> as_object(yajl_val v, const Path &p) {
    if (!YAJL_IS_OBJECT(v)) return wrong_type(p, v, "an object");
    return v;
}

Result<yajl_val> as_array(yajl_val v, const Path &p) {
    if (!YAJL_IS_ARRAY(v)) return wrong_type(p, v, "an array");
    return v;
}

Status get_string(yajl_val obj, const Path &p, const char *key, std::string &out, bool required) {
    yajl_val v = member(obj, key);
    if (!v) {
        if (required) return fail_at(p.field(key), "required field is missing");
        return {};
    }
    if (!YAJL_IS_STRING(v)) return wrong_type(p.field(key), v, "a string");
    out = v->u.string;
    return {};
}

Status get_bool(yajl_val obj, const Path &p, const char *key, bool &out) {
    yajl_val v = member(obj, key);
    if (!v) return {};
    if (!YAJL_IS_TRUE(v) && !YAJL_IS_FALSE(v)) return wrong_type(p.field(key), v, "a boolean");
    out = YAJL_IS_TRUE(v);
    return {};
}

Status get_bool_opt(yajl_val obj, const Path &p, const char *key, std::optional<bool> &out) {
    yajl_val v = member(obj, key);
    if (!v) return {};
    bool b = false;
    OCI_CHECK(get_bool(obj, p, key, b));
    out = b;
    return {};
}

Status get_strings(yajl_val obj, const Path &p, const char *key, std::vector<std::string> &out,
                   bool required) {
    reserve_for(obj, key, out);
    return each(
        obj, p, key,
        [&](yajl_val v, const Path &ip, size_t) -> Status {
            if (!YAJL_IS_STRING(v)) return wrong_type(ip, v, "a string");
            out.emplace_back(v->u.string);
            return {};
        },
        required);
}

Status get_string_map(yajl_val obj, const Path &p, const char *key,
                      std::map<std::string, std::string> &out) {
    return each_member(obj, p, key, [&](const char *k, yajl_val v, const Path &mp) -> Status {
        if (YAJL_IS_NULL(v)) return {};
        if (!YAJL_IS_STRING(v)) return wrong_type(mp, v, "a string");
        out[k] = v->u.string;
        return {};
    });
}

// Integers are read from yajl's raw text so that values beyond long long
// (uint64 limits such as 18446744073709551615) are exact. As with Go's
// encoding/json (runc), 5.0 and 1e3 are not integers.
static Result<const char *> integer_text(yajl_val v, const Path &p) {
    if (!YAJL_IS_NUMBER(v)) return wrong_type(p, v, "an integer");
    const char *r = v->u.number.r;
    if (std::strpbrk(r, ".eE")) return fail_at(p, std::string("expected an integer, got ") + r);
    return r;
}

static std::unexpected<Error> out_of_range(const Path &p, const char *r, std::string lo,
                                           uint64_t hi) {
    return fail_at(p, std::string(r) + " is out of range [" + lo + ", " + std::to_string(hi) + "]");
}

Result<int64_t> to_int(yajl_val v, const Path &p, int64_t lo, int64_t hi) {
    const char *r = OCI_TRY(integer_text(v, p));
    errno = 0;
    long long n = std::strtoll(r, nullptr, 10);
    if (errno == ERANGE || n < lo || n > hi)
        return out_of_range(p, r, std::to_string(lo), static_cast<uint64_t>(hi));
    return static_cast<int64_t>(n);
}

Result<uint64_t> to_uint(yajl_val v, const Path &p, uint64_t hi) {
    const char *r = OCI_TRY(integer_text(v, p));
    errno = 0;
    unsigned long long n = r[0] == '-' ? 0 : std::strtoull(r, nullptr, 10);
    if (r[0] == '-' || errno == ERANGE || n > hi) return out_of_range(p, r, "0", hi);
    return static_cast<uint64_t>(n);
}

// ---- Writer ----

namespace {

// One compact generator kept for the next Writer, its buffer emptied but
// not freed: a create writes its record three times and the spec once, and
// each new yajl_gen asked malloc for about 2.6 KB (the generator and its
// first 2 KB of buffer; bench/startup's heap figure). One that wrote more
// than kSpareMax is freed, so a large document's buffer is not held for the
// process's life.
// Atomic, so that it stays right for a program that writes from more than
// one thread (none does today; it costs nothing).
std::atomic<yajl_gen> g_spare{nullptr};
constexpr size_t kSpareMax = 16 * 1024;

} // namespace

Writer::Writer(bool pretty) : g_(pretty ? nullptr : g_spare.exchange(nullptr)), pretty_(pretty) {
    if (g_) return; // reset and cleared when it was put back
    g_ = yajl_gen_alloc(nullptr);
    if (pretty) {
        yajl_gen_config(g_, yajl_gen_beautify, 1);
        yajl_gen_config(g_, yajl_gen_indent_string, "\t");
    }
    yajl_gen_config(g_, yajl_gen_validate_utf8, 0);
}

Writer::~Writer() {
    if (!pretty_ && view().size() <= kSpareMax) {
        yajl_gen_clear(g_);
        yajl_gen_reset(g_, nullptr);
        yajl_gen none = nullptr;
        if (g_spare.compare_exchange_strong(none, g_)) return;
    }
    yajl_gen_free(g_);
}

Writer &Writer::begin_object() {
    yajl_gen_map_open(g_);
    return *this;
}
Writer &Writer::end_object() {
    yajl_gen_map_close(g_);
    return *this;
}
Writer &Writer::begin_array() {
    yajl_gen_array_open(g_);
    return *this;
}
Writer &Writer::end_array() {
    yajl_gen_array_close(g_);
    return *this;
}
Writer &Writer::key(std::string_view k) {
    return str(k);
}
namespace {

// The length of the valid UTF-8 sequence at s[i] (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0.
size_t utf8_sequence(std::string_view s, size_t i) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    if (c < 0x80) return 1;
    size_t n = c >= 0xc2 && c <= 0xdf   ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; k++)
        if ((b(i + k) & 0xc0) != 0x80) return 0;
    unsigned char d = b(i + 1);
    if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d > 0x9f) || (c == 0xf0 && d < 0x90) ||
        (c == 0xf4 && d > 0x8f))
        return 0;
    return n;
}

} // namespace

Writer &Writer::str(std::string_view s) {
    std::string fixed;
    size_t done = 0;
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_sequence(s, i);
        if (n > 0) {
            i += n;
            continue;
        }
        fixed.append(s.substr(done, i - done)).append("\xEF\xBF\xBD"); // U+FFFD
        replaced_++;
        done = ++i;
    }
    if (done > 0) {
        fixed.append(s.substr(done));
        s = fixed;
    }
    yajl_gen_string(g_, reinterpret_cast<const unsigned char *>(s.data()), s.size());
    return *this;
}
Writer &Writer::boolean(bool b) {
    yajl_gen_bool(g_, b);
    return *this;
}
Writer &Writer::i64(int64_t v) {
    yajl_gen_integer(g_, static_cast<long long>(v));
    return *this;
}
Writer &Writer::u64(uint64_t v) {
    char buf[32];
    int n = std::snprintf(buf, sizeof buf, "%" PRIu64, v);
    yajl_gen_number(g_, buf, static_cast<size_t>(n));
    return *this;
}
Writer &Writer::null() {
    yajl_gen_null(g_);
    return *this;
}

Writer &Writer::kv_strings(std::string_view k, const std::vector<std::string> &v) {
    key(k).begin_array();
    for (const auto &s : v)
        str(s);
    return end_array();
}

Writer &Writer::kv_map(std::string_view k, const std::map<std::string, std::string> &m) {
    key(k).begin_object();
    for (const auto &[mk, mv] : m)
        kv(mk, mv);
    return end_object();
}

std::string_view Writer::view() const {
    const unsigned char *buf = nullptr;
    size_t len = 0;
    yajl_gen_get_buf(g_, &buf, &len);
    return {reinterpret_cast<const char *>(buf), len};
}

} // namespace ocirun::json
