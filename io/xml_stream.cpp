#include "io/xml_stream.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>

#include "common/errors.hpp"
#include "io/file_names.hpp"

namespace mdsim::xml {

// ---------------------------------------------------------------- Element

void Element::fail(const std::string& message) const { throw InputError(located(file, line, 0, what + message)); }

const char* Element::optional(std::string_view key) const {
  for (int i = 0; attrs[i] != nullptr; i += 2)
    if (key == attrs[i]) return attrs[i + 1];
  return nullptr;
}

const char* Element::required(std::string_view key) const {
  const char* v = optional(key);
  if (v == nullptr) fail(fmt::format("<{}> needs the attribute `{}`", tag, key));
  return v;
}

double Element::parse(std::string_view key, const char* text) const {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  bool ok = end != text && errno != ERANGE && std::isfinite(v);
  for (const char* p = end; ok && *p != '\0'; ++p) ok = std::isspace(static_cast<unsigned char>(*p)) != 0;
  if (!ok) fail(fmt::format("<{}> attribute `{}` = \"{}\" is not a number", tag, key, text));
  return v;
}

double Element::number(std::string_view key) const { return parse(key, required(key)); }

double Element::number_or(std::string_view key, double fallback) const {
  const char* v = optional(key);
  return v == nullptr ? fallback : parse(key, v);
}

long long Element::integer_or(std::string_view key, long long fallback) const {
  const char* text = optional(key);
  if (text == nullptr) return fallback;
  const double v = parse(key, text);
  if (v != std::floor(v) || std::fabs(v) > 2147483647.0)
    fail(fmt::format("<{}> attribute `{}` = \"{}\" is not a whole number", tag, key, text));
  return static_cast<long long>(v);
}

long long Element::integer(std::string_view key) const {
  required(key);
  return integer_or(key, 0);
}

int Element::particle(std::string_view key, int count) const {
  const long long i = integer(key);
  if (i < 0 || i >= count)
    fail(fmt::format("<{}> attribute `{}` = {} is not a particle index: the System has {} particles{}", tag, key, i,
                     count, count > 0 ? fmt::format(" (0 to {})", count - 1) : std::string()));
  return static_cast<int>(i);
}

bool Element::flag_or(std::string_view key, bool fallback) const { return integer_or(key, fallback ? 1 : 0) != 0; }

// ---------------------------------------------------------------- the stream

namespace {

struct ParseContext {
  XmlReader* reader = nullptr;
  XML_Parser parser = nullptr;
  std::exception_ptr error;
};

void on_start(void* user, const XML_Char* name, const XML_Char** attrs) {
  auto* c = static_cast<ParseContext*>(user);
  if (c->error) return;
  try {
    XmlReader& r = *c->reader;
    const int depth = static_cast<int>(r.stack.size());
    const int line = static_cast<int>(XML_GetCurrentLineNumber(c->parser));
    if (depth == 0) r.have_root = true, r.root_line = line;
    const Element e{r.file(), name, attrs, line, {}};
    r.start(e, depth, depth == 0 ? std::string_view() : std::string_view(r.stack.back()));
    r.stack.emplace_back(name);
  } catch (...) {
    c->error = std::current_exception();
    XML_StopParser(c->parser, XML_FALSE);
  }
}

void on_end(void* user, const XML_Char* name) {
  auto* c = static_cast<ParseContext*>(user);
  if (c->error) return;
  try {
    XmlReader& r = *c->reader;
    r.stack.pop_back();
    r.end(name, static_cast<int>(r.stack.size()));
  } catch (...) {
    c->error = std::current_exception();
    XML_StopParser(c->parser, XML_FALSE);
  }
}

// Feeds `read`'s chunks (it returns the bytes it put in the buffer, 0 at the end) through expat into `reader`.
template <typename Read>
void parse_stream(XmlReader& reader, Read&& read) {
  std::unique_ptr<std::remove_pointer_t<XML_Parser>, void (*)(XML_Parser)> parser(XML_ParserCreate(nullptr),
                                                                                  XML_ParserFree);
  if (!parser) throw RuntimeError("cannot create an XML parser");
  ParseContext context{&reader, parser.get(), nullptr};
  XML_SetUserData(parser.get(), &context);
  XML_SetElementHandler(parser.get(), on_start, on_end);
  std::vector<char> buffer(1 << 16);
  for (bool last = false; !last;) {
    const std::size_t got = read(buffer.data(), buffer.size());
    last = got == 0;
    const XML_Status status = XML_Parse(parser.get(), buffer.data(), static_cast<int>(got), last ? 1 : 0);
    if (context.error) std::rethrow_exception(context.error);
    if (status == XML_STATUS_ERROR)
      throw InputError(located(reader.file(), static_cast<int>(XML_GetCurrentLineNumber(parser.get())),
                               static_cast<int>(XML_GetCurrentColumnNumber(parser.get())) + 1,
                               fmt::format("malformed XML: {}", XML_ErrorString(XML_GetErrorCode(parser.get())))));
  }
  if (!reader.have_root) throw InputError(located(reader.file(), 1, 0, "empty XML file"));
}

}  // namespace

void parse_text(XmlReader& reader, const std::string& text) {
  std::size_t offset = 0;
  parse_stream(reader, [&](char* buffer, std::size_t capacity) {
    const std::size_t n = std::min(capacity, text.size() - offset);
    std::memcpy(buffer, text.data() + offset, n);
    offset += n;
    return n;
  });
}

void parse_file(XmlReader& reader, const std::string& path, const char* what) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr)
    throw InputError(located(path, 0, 0, fmt::format("cannot open the {}: {}", what, std::strerror(errno))));
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(file, gzclose);
  const bool gz_name = ends_with_ci(path, ".gz");
  bool checked = false;
  parse_stream(reader, [&](char* buffer, std::size_t capacity) {
    const int n = gzread(file, buffer, static_cast<unsigned>(capacity));
    int status = Z_OK;
    const char* text = gzerror(file, &status);
    if (n < 0 || (status != Z_OK && status != Z_STREAM_END)) {
      std::string problem = status == Z_ERRNO ? std::strerror(errno) : text;
      if (problem.rfind(path + ": ", 0) == 0) problem = problem.substr(path.size() + 2);  // zlib names the file
      throw InputError(located(path, 0, 0,
                               fmt::format("cannot read the {} ({}){}", what, problem,
                                           gz_name ? ": the gzip data is damaged or truncated" : "")));
    }
    if (!checked && n > 0 && gz_name && gzdirect(file) == 1)
      throw InputError(located(path, 0, 0,
                               "the name ends in .gz but the file is not gzip-compressed; rename it "
                               "without .gz"));
    checked = true;
    return static_cast<std::size_t>(n);
  });
}

// ---------------------------------------------------------------- box

void BoxReader::vector(const Element& e) {
  const int k = e.tag == "A" ? 0 : e.tag == "B" ? 1 : e.tag == "C" ? 2 : -1;
  if (k < 0) e.fail(fmt::format("unexpected <{}> in <PeriodicBoxVectors> (expected A, B and C)", e.tag));
  v[k] = Vec3d(e.number("x"), e.number("y"), e.number("z"));
  seen[k] = true;
}

std::optional<Boxd> BoxReader::box(const std::string& file) const {
  if (!seen[0] && !seen[1] && !seen[2]) return std::nullopt;
  auto fail = [&](const std::string& m) { throw InputError(located(file, line, 0, m)); };
  if (!(seen[0] && seen[1] && seen[2])) fail("<PeriodicBoxVectors> needs the vectors A, B and C");
  const Vec3d &a = v[0], &b = v[1], &c = v[2];
  const double slack = 1e-6 * std::max({a.x, b.y, c.z, 0.0});
  if (a.y != 0.0 || a.z != 0.0 || b.z != 0.0 || !(a.x > 0.0 && b.y > 0.0 && c.z > 0.0) ||
      std::fabs(b.x) > 0.5 * a.x + slack || std::fabs(c.x) > 0.5 * a.x + slack || std::fabs(c.y) > 0.5 * b.y + slack)
    fail(
        fmt::format("the periodic box vectors a = ({}, {}, {}), b = ({}, {}, {}), c = ({}, {}, {}) nm are not in "
                    "OpenMM's reduced form (a along x, b in the xy plane, a positive diagonal, |b_x| and |c_x| at "
                    "most a_x/2, |c_y| at most b_y/2)",
                    a.x, a.y, a.z, b.x, b.y, b.z, c.x, c.y, c.z));
  Boxd out;
  out.a = a, out.b = b, out.c = c;
  return out;
}

}  // namespace mdsim::xml
