#include "report/case_record.hpp"

#include "numeric/context.hpp"
#include "numeric/kinds.hpp"
#include "report/files.hpp"
#include "report/sha256.hpp"
#include "util/read_file.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace attnprop::report {

namespace fs = std::filesystem;
using json::value;
using namespace json_out;

namespace {

/// A JSON number lexeme as a long: digits with an optional minus sign, nothing else.
/// "out of range" and "not an integer" are told apart for the message.
enum class int_parse { ok, not_integer, out_of_range };
int_parse parse_long(const std::string& lexeme, long* out) {
    std::size_t i = lexeme.starts_with('-') ? 1 : 0;
    if (i == lexeme.size()) return int_parse::not_integer;
    for (std::size_t t = i; t < lexeme.size(); ++t)
        if (lexeme[t] < '0' || lexeme[t] > '9') return int_parse::not_integer;
    errno = 0;
    char* end = nullptr;
    const long v = std::strtol(lexeme.c_str(), &end, 10);
    if (errno == ERANGE) return int_parse::out_of_range;
    *out = v;
    return int_parse::ok;
}

/// A decimal string of an unsigned 64-bit integer: 1 to 20 digits, no sign, at most 2^64 - 1.
bool parse_u64(const std::string& s, std::uint64_t* out) {
    if (s.empty() || s.size() > 20) return false;
    if (!std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) return false;
    if (s.size() > 1 && s[0] == '0') return false;
    errno = 0;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (errno == ERANGE) return false;
    *out = v;
    return true;
}

/// A path inside the folder: relative, without "..", not empty.
bool inside_folder(const std::string& p) {
    if (p.empty() || p.front() == '/' || p.find('\0') != std::string::npos) return false;
    for (const auto& part : fs::path(p))
        if (part == "..") return false;
    return true;
}


/// Reads members of one case.json, failing with its file name, the member's position and its
/// JSON pointer.
class field_reader {
public:
    field_reader(std::string file, case_record& rec) : file_(std::move(file)), rec_(rec) {}

    [[noreturn]] void fail(const value& v, const std::string& pointer, const std::string& msg) const {
        throw case_file_error(file_, v.where(), pointer, msg);
    }
    void note(const value& v, const std::string& pointer) { rec_.locations[pointer] = v.where(); }
    void expect(const value& v, const std::string& pointer, json::kind k) {
        note(v, pointer);
        if (v.type() != k)
            fail(v, pointer, "expected " + std::string(json::kind_name(k)) + ", got " + json::kind_name(v.type()));
    }
    const std::string& string(const value& v, const std::string& pointer) {
        expect(v, pointer, json::kind::string);
        return v.as_string();
    }
    long integer(const value& v, const std::string& pointer, long lo = LONG_MIN, long hi = LONG_MAX,
                 const std::string& range_note = "") {
        expect(v, pointer, json::kind::number);
        long x = 0;
        switch (parse_long(v.raw_number(), &x)) {
        case int_parse::not_integer: fail(v, pointer, v.raw_number() + " is not an integer");
        case int_parse::out_of_range:
            fail(v, pointer, v.raw_number() + " is outside the range of a 64-bit integer");
        case int_parse::ok: break;
        }
        if (x < lo || x > hi)
            fail(v, pointer, v.raw_number() + " is outside [" + std::to_string(lo) + ", " +
                                 std::to_string(hi) + "]" + range_note);
        return x;
    }
    std::uint64_t seed(const value& v, const std::string& pointer) {
        const std::string& s = string(v, pointer);
        std::uint64_t x = 0;
        if (!parse_u64(s, &x))
            fail(v, pointer, "\"" + s + "\" is not a decimal unsigned 64-bit integer (0 to 18446744073709551615)");
        return x;
    }
    std::string path(const value& v, const std::string& pointer) {
        const std::string& s = string(v, pointer);
        if (!inside_folder(s)) fail(v, pointer, "\"" + s + "\" is not a relative path inside the folder");
        return s;
    }

private:
    std::string file_;
    case_record& rec_;
};

/// One member of case.json: its key, whether a file must have it, how to write it (nullopt:
/// left out) and how to read it back.
struct field {
    const char* key;
    bool required;
    std::optional<value> (*write)(const case_record&);
    void (*read)(field_reader&, const value&, case_record&);
};

const std::string precision_note = " (the range of --precision)";

// The one field table: the order is the order in the file.
const field fields[] = {
    {"format", true, [](const case_record&) -> std::optional<value> { return str(case_format); },
     [](field_reader& r, const value& v, case_record&) {
         if (r.string(v, "/format") != case_format)
             r.fail(v, "/format", "not an attnprop counterexample (format \"" + v.as_string() +
                                      "\", expected \"" + case_format + "\")");
     }},
    {"version", true, [](const case_record&) -> std::optional<value> { return num(case_version); },
     [](field_reader& r, const value& v, case_record&) {
         r.expect(v, "/version", json::kind::number);
         if (v.raw_number() != std::to_string(case_version))
             r.fail(v, "/version", "unsupported version " + v.raw_number() + " (this attnprop reads version " +
                                       std::to_string(case_version) + ")");
     }},
    {"property", true, [](const case_record& c) -> std::optional<value> { return str(c.property); },
     [](field_reader& r, const value& v, case_record& c) {
         c.property = r.string(v, "/property");
         if (c.property.empty()) r.fail(v, "/property", "the property name is empty");
     }},
    {"statement", true, [](const case_record& c) -> std::optional<value> { return str(c.statement); },
     [](field_reader& r, const value& v, case_record& c) { c.statement = r.string(v, "/statement"); }},
    {"model", true, [](const case_record& c) -> std::optional<value> { return str(c.model); },
     [](field_reader& r, const value& v, case_record& c) { c.model = r.path(v, "/model"); }},
    {"inputs", true, [](const case_record& c) -> std::optional<value> { return string_array(c.inputs); },
     [](field_reader& r, const value& v, case_record& c) {
         r.expect(v, "/inputs", json::kind::array);
         c.inputs.clear();
         for (std::size_t i = 0; i < v.size(); ++i)
             c.inputs.push_back(r.string(v[i], "/inputs/" + std::to_string(i)));
     }},
    {"n", true,
     [](const case_record& c) -> std::optional<value> {
         value ns = value::array();
         for (const auto& in : c.inputs) ns.push_back(num(static_cast<long long>(in.size()) + 1));
         return ns;
     },
     [](field_reader& r, const value& v, case_record& c) {
         r.expect(v, "/n", json::kind::array);
         if (v.size() != c.inputs.size())
             r.fail(v, "/n", "holds " + std::to_string(v.size()) + " lengths for " +
                                 std::to_string(c.inputs.size()) + " inputs");
         for (std::size_t i = 0; i < v.size(); ++i) {
             const std::string p = "/n/" + std::to_string(i);
             const long n = r.integer(v[i], p);
             if (n != static_cast<long>(c.inputs[i].size()) + 1)
                 r.fail(v[i], p, "n = " + std::to_string(n) + " does not match input " + std::to_string(i) +
                                     ", which has " + std::to_string(c.inputs[i].size()) +
                                     " symbols (n = symbols + 1, eos included)");
         }
     }},
    {"params", true,
     [](const case_record& c) -> std::optional<value> {
         value o = value::object();
         for (const auto& [k, x] : c.params) o.set(k, num(x));
         return o;
     },
     [](field_reader& r, const value& v, case_record& c) {
         r.expect(v, "/params", json::kind::object);
         c.params.clear();
         for (const auto& [k, x] : v.members())
             c.params[k] = r.integer(x, "/params/" + json::pointer_escape(k));
     }},
    {"seed", true, [](const case_record& c) -> std::optional<value> { return str(std::to_string(c.seed)); },
     [](field_reader& r, const value& v, case_record& c) { c.seed = r.seed(v, "/seed"); }},
    {"base_seed", true,
     [](const case_record& c) -> std::optional<value> { return str(std::to_string(c.base_seed)); },
     [](field_reader& r, const value& v, case_record& c) { c.base_seed = r.seed(v, "/base_seed"); }},
    {"reproduce", true, [](const case_record& c) -> std::optional<value> { return str(c.reproduce); },
     [](field_reader& r, const value& v, case_record& c) { c.reproduce = r.string(v, "/reproduce"); }},
    {"scalar_kinds", true,
     [](const case_record& c) -> std::optional<value> { return string_array(c.scalar_kinds); },
     [](field_reader& r, const value& v, case_record& c) {
         r.expect(v, "/scalar_kinds", json::kind::array);
         c.scalar_kinds.clear();
         for (std::size_t i = 0; i < v.size(); ++i) {
             const std::string p = "/scalar_kinds/" + std::to_string(i);
             const std::string& k = r.string(v[i], p);
             if (!numeric::is_user_kind(k)) {
                 std::string known;
                 for (const auto& info : numeric::user_kind_infos)
                     known += (known.empty() ? "" : ", ") + std::string(info.name);
                 r.fail(v[i], p, "unknown scalar kind \"" + k + "\" (known: " + known + ")");
             }
             c.scalar_kinds.push_back(k);
         }
     }},
    {"precision", true, [](const case_record& c) -> std::optional<value> { return num(c.precision); },
     [](field_reader& r, const value& v, case_record& c) {
         c.precision = r.integer(v, "/precision", numeric::min_precision_bits, numeric::max_precision_bits,
                                 precision_note);
     }},
    {"precision_cap", true, [](const case_record& c) -> std::optional<value> { return num(c.precision_cap); },
     [](field_reader& r, const value& v, case_record& c) {
         c.precision_cap = r.integer(v, "/precision_cap", numeric::min_precision_bits,
                                     numeric::max_precision_bits, " (the range of --precision-cap)");
         if (c.precision_cap < c.precision)
             r.fail(v, "/precision_cap", "precision_cap " + std::to_string(c.precision_cap) +
                                             " is below precision " + std::to_string(c.precision));
     }},
    {"verdict", true, [](const case_record& c) -> std::optional<value> { return str(std::string(word(c.verdict))); },
     [](field_reader& r, const value& v, case_record& c) {
         const std::string w = r.string(v, "/verdict");
         // The words of a case's verdict; folders written before they were the table's say holds
         // and violated.
         auto read = verdict_of_word(w);
         if (w == "holds" || w == "violated") read = verdict_of_any_word(w);
         if (!read || *read == verdict::gave_up || *read == verdict::not_applicable)
             r.fail(v, "/verdict", "unknown verdict \"" + w +
                                       "\" (known: passed, failed, undecided, undefined)");
         c.verdict = *read;
     }},
    {"message", true, [](const case_record& c) -> std::optional<value> { return str(c.message); },
     [](field_reader& r, const value& v, case_record& c) { c.message = r.string(v, "/message"); }},
    {"numbers", true,
     [](const case_record& c) -> std::optional<value> {
         value o = value::object();
         for (const auto& [k, x] : c.numbers) o.set(k, opt_str(x));
         return o;
     },
     [](field_reader& r, const value& v, case_record& c) {
         r.expect(v, "/numbers", json::kind::object);
         c.numbers.clear();
         for (const auto& [k, x] : v.members()) {
             const std::string p = "/numbers/" + json::pointer_escape(k);
             r.note(x, p);
             if (x.is_null())
                 c.numbers.emplace_back(k, std::nullopt);
             else
                 c.numbers.emplace_back(k, r.string(x, p));
         }
     }},
    {"numbers_from", false, [](const case_record& c) -> std::optional<value> { return str(c.numbers_from); },
     [](field_reader& r, const value& v, case_record& c) {
         c.numbers_from = r.string(v, "/numbers_from");
         if (c.numbers_from != "check" && c.numbers_from != "influence" && c.numbers_from != "restrict")
             r.fail(v, "/numbers_from", "unknown source \"" + c.numbers_from +
                                            "\" (known: check, influence, restrict)");
     }},
    {"shrink_steps", false,
     [](const case_record& c) -> std::optional<value> {
         if (!c.shrink_steps) return std::nullopt;
         return num(*c.shrink_steps);
     },
     [](field_reader& r, const value& v, case_record& c) {
         c.shrink_steps = r.integer(v, "/shrink_steps", 0);
     }},
    {"original", false,
     [](const case_record& c) -> std::optional<value> {
         if (!c.original) return std::nullopt;
         return str(*c.original);
     },
     [](field_reader& r, const value& v, case_record& c) { c.original = r.path(v, "/original"); }},
    {"shrunk", false,
     [](const case_record& c) -> std::optional<value> {
         if (!c.shrunk) return std::nullopt;
         return value::boolean(*c.shrunk);
     },
     [](field_reader& r, const value& v, case_record& c) {
         r.expect(v, "/shrunk", json::kind::boolean);
         c.shrunk = v.as_bool();
     }},
    {"provenance", false,
     [](const case_record& c) -> std::optional<value> {
         if (c.made_by.empty()) return std::nullopt;
         return provenance_to_json(c.made_by);
     },
     [](field_reader& r, const value& v, case_record& c) {
         r.expect(v, "/provenance", json::kind::object);
         value holder = value::object();
         holder.set("provenance", v);
         auto p = provenance_from_json(holder);
         if (!p) r.fail(v, "/provenance", "not a well-formed provenance object (docs/reports.md, \"Provenance\")");
         c.made_by = std::move(*p);
     }},
};

const char* const fingerprint_key = "fingerprint";

/// The fingerprint member: {"algorithm": "sha256", "model": hex, "case": hex}.
case_fingerprint read_fingerprint(field_reader& r, const value& v) {
    r.expect(v, "/fingerprint", json::kind::object);
    case_fingerprint fp;
    bool algorithm = false, model = false, kase = false;
    for (const auto& [k, x] : v.members()) {
        const std::string p = "/fingerprint/" + json::pointer_escape(k);
        if (k == "algorithm") {
            if (r.string(x, p) != "sha256")
                r.fail(x, p, "unknown fingerprint algorithm \"" + x.as_string() + "\" (known: sha256)");
            algorithm = true;
        } else if (k == "model" || k == "case") {
            const std::string& h = r.string(x, p);
            if (!is_sha256_hex(h)) r.fail(x, p, "not a SHA-256 (64 lowercase hex digits)");
            (k == "model" ? fp.model_sha256 : fp.case_sha256) = h;
            (k == "model" ? model : kase) = true;
        } else {
            r.fail(x, p, "unknown key \"" + k + "\" (a fingerprint has algorithm, model, case)");
        }
    }
    if (!algorithm || !model || !kase)
        r.fail(v, "/fingerprint", std::string("missing key \"") +
                                      (!algorithm ? "algorithm" : !model ? "model" : "case") + "\"");
    return fp;
}

/// The case's SHA-256: of the compact serialisation (json::dump, indent -1) of the document
/// without its "fingerprint" and "provenance" members. The provenance says who wrote the folder
/// and varies with the command line; nothing of it is replayed.
std::string case_hash(const value& doc) {
    value sealed = value::object();
    for (const auto& [k, v] : doc.members())
        if (k != fingerprint_key && k != "provenance") sealed.set(k, v);
    return sha256_hex(json::dump(sealed, -1));
}

struct parsed_case {
    case_record record;
    std::string case_sha256; ///< of the document without its fingerprint
};

parsed_case parse_case(std::string_view text, const std::string& file) {
    value doc;
    try {
        doc = json::parse(text);
    } catch (const json::parse_error& e) {
        throw case_file_error(file, e.where(), "", e.message());
    }
    parsed_case out;
    out.record.numbers_from.clear(); // absent in folders written before it existed
    field_reader r(file, out.record);
    if (!doc.is_object())
        throw case_file_error(file, doc.where(), "",
                              std::string("expected an object, got ") + json::kind_name(doc.type()));
    // Unknown members first: a misspelt key is named as such, not as a missing one.
    for (const auto& [k, v] : doc.members()) {
        const bool known = k == fingerprint_key ||
                           std::any_of(std::begin(fields), std::end(fields),
                                       // (an init-capture: clang 14 cannot capture a structured binding)
                                       [&key = k](const field& f) { return key == f.key; });
        if (!known) r.fail(v, "/" + json::pointer_escape(k), "unknown key \"" + k + "\"");
    }
    for (const field& f : fields) {
        const value* v = doc.find(f.key);
        if (!v) {
            if (f.required)
                throw case_file_error(file, doc.where(), "", std::string("missing key \"") + f.key + "\"");
            continue;
        }
        f.read(r, *v, out.record);
    }
    for (const auto& [k, v] : doc.members())
        if (k == fingerprint_key) out.record.fingerprint = read_fingerprint(r, v);
    out.case_sha256 = case_hash(doc);
    return out;
}

/// Only a regular file is read: a FIFO in its place would block replay for ever, a link to
/// /dev/zero grow its memory without bound (util::read_regular_file).
std::string read_bytes(const fs::path& p, std::string* out) {
    return util::read_regular_file(p, *out);
}

} // namespace

json::location case_record::where(const std::string& pointer) const {
    auto it = locations.find(pointer);
    return it == locations.end() ? json::location{} : it->second;
}

value case_to_json(const case_record& c) {
    value o = value::object();
    for (const field& f : fields)
        if (auto v = f.write(c)) o.set(f.key, std::move(*v));
    return o;
}

case_record parse_case_record(std::string_view text, const std::string& file_name) {
    return parse_case(text, file_name).record;
}

fs::path write_case_folder(const fs::path& dir, const std::string& model_text, const case_record& c) {
    fs::create_directories(dir);
    value doc = case_to_json(c);
    value fp = value::object();
    fp.set("algorithm", str("sha256"));
    fp.set("model", str(sha256_hex(model_text)));
    fp.set("case", str(case_hash(doc)));
    doc.set(fingerprint_key, std::move(fp));
    const fs::path model_path = dir / c.model;
    if (model_path.has_parent_path()) fs::create_directories(model_path.parent_path());
    write_file_atomic(model_path, model_text);
    write_file_atomic(dir / "case.json", json::dump(doc, 2) + "\n");
    return dir;
}

case_folder read_case_folder(const fs::path& dir) {
    case_folder out;
    out.case_path = dir / "case.json";
    const std::string file = out.case_path.string();
    std::string text;
    if (std::string why = read_bytes(out.case_path, &text); !why.empty())
        throw case_file_error(file, {}, "", why + " (is " + dir.string() + " a counterexample folder?)");
    parsed_case pc = parse_case(text, file);
    out.record = std::move(pc.record);
    out.model_path = dir / out.record.model;
    if (std::string why = read_bytes(out.model_path, &out.model_text); !why.empty())
        throw case_file_error(file, out.record.where("/model"), "/model",
                              "the model file " + out.model_path.string() + " " + why);
    const auto& fp = out.record.fingerprint;
    if (!fp) {
        out.seal = seal_status::missing;
        out.seal_detail = "case.json records no fingerprint, so nothing tells whether the folder was "
                          "edited since it was written";
        return out;
    }
    const std::string model_now = sha256_hex(out.model_text);
    std::vector<std::string> changed;
    if (model_now != fp->model_sha256)
        changed.push_back(out.record.model + " changed (its SHA-256 is " + model_now +
                          "; case.json records " + fp->model_sha256 + ")");
    if (pc.case_sha256 != fp->case_sha256)
        changed.push_back("case.json changed (the SHA-256 of its fields is " + pc.case_sha256 +
                          "; it records " + fp->case_sha256 + ")");
    if (changed.empty()) {
        out.seal = seal_status::intact;
        return out;
    }
    out.seal = seal_status::edited;
    out.seal_detail = "the folder was edited since attnprop wrote it: ";
    for (std::size_t i = 0; i < changed.size(); ++i)
        out.seal_detail += (i ? ", and " : "") + changed[i];
    return out;
}

} // namespace attnprop::report
