// hydrogens.xml reader: a streaming expat parse (the format is two levels deep: <Residue> holding <Variant>
// and <H>), with the rules of OpenMM 7.7's Modeller.loadHydrogenDefinitions.
#include "io/hydrogen_definitions.hpp"

#include <expat.h>
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <sstream>

#include "common/errors.hpp"
#include "io/text_input.hpp"

namespace mdsim {
namespace {

struct Reader {
  std::string source;
  HydrogenDefinitions* into = nullptr;
  XML_Parser parser = nullptr;
  int depth = 0;
  ResidueHydrogens* residue = nullptr;  // the <Residue> being read
  std::string error;                    // first error; parsing stops there

  int line() const { return static_cast<int>(XML_GetCurrentLineNumber(parser)); }
  void fail(const std::string& message) {
    if (error.empty()) error = located(source, line(), 0, message);
    XML_StopParser(parser, XML_FALSE);
  }
};

const char* find(const XML_Char** attrs, const char* key) {
  for (int i = 0; attrs[i] != nullptr; i += 2)
    if (std::string(attrs[i]) == key) return attrs[i + 1];
  return nullptr;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) out.push_back(item);
  return out;
}

void on_start(void* user, const XML_Char* tag_c, const XML_Char** attrs) {
  auto* r = static_cast<Reader*>(user);
  const std::string tag = tag_c;
  ++r->depth;
  if (r->depth == 2 && tag == "Residue") {
    const char* name = find(attrs, "name");
    if (name == nullptr) return r->fail("<Residue> needs the attribute `name`");
    ResidueHydrogens fresh;
    fresh.name = name;
    r->residue = &(r->into->residues[fresh.name] = std::move(fresh));  // a later file replaces it, as Modeller
    return;
  }
  if (r->depth != 3 || r->residue == nullptr) return;  // other elements are ignored, as Modeller does
  if (tag == "Variant") {
    const char* name = find(attrs, "name");
    if (name == nullptr) return r->fail("<Variant> needs the attribute `name`");
    r->residue->variants.emplace_back(name);
  } else if (tag == "H") {
    HydrogenDefinition h;
    const char* name = find(attrs, "name");
    const char* parent = find(attrs, "parent");
    if (name == nullptr || parent == nullptr)
      return r->fail(fmt::format("<H> in residue {} needs the attributes `name` and `parent`", r->residue->name));
    h.name = name;
    h.parent = parent;
    if (const char* maxph = find(attrs, "maxph")) {
      char* end = nullptr;
      errno = 0;
      h.max_ph = std::strtod(maxph, &end);
      if (end == maxph || *end != '\0' || errno == ERANGE || std::isnan(h.max_ph))
        return r->fail(fmt::format("<H name=\"{}\"> maxph = \"{}\" is not a number (a pH, e.g. 4.4)", h.name, maxph));
    }
    if (const char* variant = find(attrs, "variant")) h.variants = split_commas(variant);
    if (const char* terminal = find(attrs, "terminal")) h.terminal = terminal;
    r->residue->hydrogens.push_back(std::move(h));
  }
}

void on_end(void* user, const XML_Char* /*tag*/) {
  auto* r = static_cast<Reader*>(user);
  if (r->depth == 2) r->residue = nullptr;
  --r->depth;
}

}  // namespace

void parse_hydrogen_definitions(const std::string& text, const std::string& source, HydrogenDefinitions& into) {
  std::unique_ptr<std::remove_pointer_t<XML_Parser>, void (*)(XML_Parser)> parser(XML_ParserCreate(nullptr),
                                                                                   XML_ParserFree);
  if (!parser) throw RuntimeError("cannot create an XML parser");
  Reader reader;
  reader.source = source;
  reader.into = &into;
  reader.parser = parser.get();
  XML_SetUserData(parser.get(), &reader);
  XML_SetElementHandler(parser.get(), on_start, on_end);
  const auto status = XML_Parse(parser.get(), text.data(), static_cast<int>(text.size()), 1);
  if (!reader.error.empty()) throw InputError(reader.error);
  if (status == XML_STATUS_ERROR)
    throw InputError(located(source, static_cast<int>(XML_GetCurrentLineNumber(parser.get())),
                             static_cast<int>(XML_GetCurrentColumnNumber(parser.get())) + 1,
                             fmt::format("malformed XML: {}", XML_ErrorString(XML_GetErrorCode(parser.get())))));
  into.files.push_back(source);
}

void load_hydrogen_definitions(const std::string& path, HydrogenDefinitions& into) {
  parse_hydrogen_definitions(read_text_file(path, "hydrogen definitions file"), path, into);
}

HydrogenDefinitions load_hydrogen_definitions(const std::string& path) {
  HydrogenDefinitions defs;
  load_hydrogen_definitions(path, defs);
  return defs;
}

}  // namespace mdsim
