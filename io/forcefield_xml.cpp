// OpenMM ForceField XML reader: expat builds a small element tree per file, then the trees are merged in
// OpenMM's phases (all atom types, then all residue templates, then patches, then the force sections in file
// order), so a later file may use types and classes of an earlier or later one.
#include "io/forcefield_xml.hpp"

#include <expat.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <system_error>
#include <unordered_set>

#include "common/errors.hpp"
#include "model/elements.hpp"

namespace mdsim {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- a minimal element tree

struct XmlElement {
  std::string tag;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::vector<XmlElement> children;
  std::string text;  // character data, kept for <Map> only (CMAP tables)
  int line = 0;

  const std::string* find_attribute(const std::string& key) const {
    for (const auto& [k, v] : attributes)
      if (k == key) return &v;
    return nullptr;
  }
  bool has(const std::string& key) const { return find_attribute(key) != nullptr; }
};

struct XmlDocument {
  std::string path;
  XmlElement root;
};

struct ParseState {
  std::vector<XmlElement*> stack;
  XmlElement* root = nullptr;
  bool have_root = false;
  XML_Parser parser = nullptr;
};

void on_start(void* user, const XML_Char* name, const XML_Char** attrs) {
  auto* state = static_cast<ParseState*>(user);
  XmlElement* element = nullptr;
  if (state->stack.empty()) {
    element = state->root;
    state->have_root = true;
  } else {
    state->stack.back()->children.emplace_back();
    element = &state->stack.back()->children.back();
  }
  element->tag = name;
  element->line = static_cast<int>(XML_GetCurrentLineNumber(state->parser));
  for (int i = 0; attrs[i] != nullptr; i += 2) element->attributes.emplace_back(attrs[i], attrs[i + 1]);
  state->stack.push_back(element);
}

void on_end(void* user, const XML_Char* /*name*/) { static_cast<ParseState*>(user)->stack.pop_back(); }

void on_text(void* user, const XML_Char* text, int length) {
  auto* state = static_cast<ParseState*>(user);
  if (!state->stack.empty() && state->stack.back()->tag == "Map") state->stack.back()->text.append(text, static_cast<std::size_t>(length));
}

// Parses XML text from `in` (a file, or the text of one); `path` names it in messages.
XmlDocument parse_xml(std::istream& in, const std::string& path) {
  XmlDocument doc;
  doc.path = path;
  ParseState state;
  state.root = &doc.root;
  std::unique_ptr<std::remove_pointer_t<XML_Parser>, void (*)(XML_Parser)> parser(XML_ParserCreate(nullptr),
                                                                                   XML_ParserFree);
  if (!parser) throw RuntimeError("cannot create an XML parser");
  state.parser = parser.get();
  XML_SetUserData(parser.get(), &state);
  XML_SetElementHandler(parser.get(), on_start, on_end);
  XML_SetCharacterDataHandler(parser.get(), on_text);
  std::vector<char> buffer(1 << 16);
  for (;;) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = in.gcount();
    const bool last = got < static_cast<std::streamsize>(buffer.size());
    if (XML_Parse(parser.get(), buffer.data(), static_cast<int>(got), last ? 1 : 0) == XML_STATUS_ERROR) {
      throw InputError(located(path, static_cast<int>(XML_GetCurrentLineNumber(parser.get())),
                               static_cast<int>(XML_GetCurrentColumnNumber(parser.get())) + 1,
                               fmt::format("malformed XML: {}", XML_ErrorString(XML_GetErrorCode(parser.get())))));
    }
    if (last) break;
  }
  if (!state.have_root) throw InputError(located(path, 1, 0, "empty XML file"));
  return doc;
}

XmlDocument parse_xml_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(located(path, 0, 0, "cannot open force field file"));
  return parse_xml(in, path);
}

// ---------------------------------------------------------------- attribute helpers

[[noreturn]] void fail(const std::string& file, const XmlElement& e, const std::string& message) {
  throw InputError(located(file, e.line, 0, message));
}

const std::string& required(const std::string& file, const XmlElement& e, const std::string& key) {
  const std::string* v = e.find_attribute(key);
  if (v == nullptr) fail(file, e, fmt::format("<{}> needs the attribute `{}`", e.tag, key));
  return *v;
}

double to_number(const std::string& file, const XmlElement& e, const std::string& key, const std::string& text) {
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(begin, &end);
  bool ok = end != begin && errno != ERANGE && std::isfinite(value);
  if (ok)
    for (const char* p = end; *p != '\0'; ++p)
      if (!std::isspace(static_cast<unsigned char>(*p))) ok = false;
  if (!ok) fail(file, e, fmt::format("<{}> attribute `{}` = \"{}\" is not a number", e.tag, key, text));
  return value;
}

double number(const std::string& file, const XmlElement& e, const std::string& key) {
  return to_number(file, e, key, required(file, e, key));
}

int integer(const std::string& file, const XmlElement& e, const std::string& key) {
  const std::string text = required(file, e, key);
  const double v = to_number(file, e, key, text);
  if (v != std::floor(v) || std::fabs(v) > 1e9)
    fail(file, e, fmt::format("<{}> attribute `{}` = \"{}\" is not an integer", e.tag, key, text));
  return static_cast<int>(v);
}

bool file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

std::string canonical_key(const std::string& path) {
  std::error_code ec;
  auto c = fs::weakly_canonical(fs::path(path), ec);
  return ec ? path : c.string();
}

// ---------------------------------------------------------------- the merge, in OpenMM's phases

class Loader {
 public:
  explicit Loader(ForceFieldData& out) : ff_(out) {}

  void load(const std::vector<XmlDocument>& docs) {
    for (const auto& doc : docs) check_root(doc);
    for (const auto& doc : docs)
      for (const auto& section : doc.root.children)
        if (section.tag == "AtomTypes") read_atom_types(doc.path, section);
    for (const auto& doc : docs)
      for (const auto& section : doc.root.children)
        if (section.tag == "Residues") read_residues(doc.path, section);
    for (const auto& t : ff_.templates)
      for (const std::string& allowed : t.allowed_patches) register_template_patch(t.name, allowed, true);
    for (const auto& doc : docs)
      for (const auto& section : doc.root.children)
        if (section.tag == "Patches")
          for (const auto& p : section.children)
            if (p.tag == "Patch") read_patch(doc.path, p);
    for (const auto& doc : docs)
      for (const auto& section : doc.root.children) read_force_section(doc.path, section);
  }

 private:
  ForceFieldData& ff_;
  std::unordered_set<std::string> classes_{""};
  std::unordered_map<std::string, int> template_index_;

  // OpenMM's registerTemplatePatch: "NAME" or, for a multi-residue patch, "NAME:i" (1-based residue of the patch).
  // `allow`: from <AllowPatch name="PATCH[:i]"> of template `name`; else from <ApplyToResidue name="[i:]TEMPLATE">.
  void register_template_patch(const std::string& name, const std::string& value, bool allow) {
    const auto colon = value.find(':');
    std::string tpl = allow ? name : value, patch = allow ? value : name;
    int index = 0;
    if (colon != std::string::npos) {
      const std::string number = allow ? value.substr(colon + 1) : value.substr(0, colon);
      index = std::atoi(number.c_str()) - 1;
      if (allow) patch = value.substr(0, colon);
      else tpl = value.substr(colon + 1);
    }
    auto& list = ff_.template_patches[tpl];
    const std::pair<std::string, int> entry{patch, index};
    if (std::find(list.begin(), list.end(), entry) == list.end()) list.push_back(entry);
  }

  static FFPatchAtomRef patch_atom_ref(const std::string& description) {
    const auto colon = description.find(':');
    if (colon == std::string::npos) return {0, description};
    return {std::atoi(description.substr(0, colon).c_str()) - 1, description.substr(colon + 1)};
  }

  FFPatchAtom patch_atom(const std::string& file, const XmlElement& a, FFPatch& patch) const {
    FFPatchAtom out;
    const std::string name = required(file, a, "name");
    const FFPatchAtomRef ref = patch_atom_ref(name);
    out.residue = ref.residue;
    out.atom.name = ref.name;
    out.atom.type = required(file, a, "type");
    if (!ff_.type_index.count(out.atom.type))
      fail(file, a, fmt::format("patch '{}' atom '{}' uses atom type '{}', which no <AtomTypes> defines", patch.name,
                                name, out.atom.type));
    for (const auto& [key, value] : a.attributes)
      if (key != "name" && key != "type") out.atom.parameters[key] = to_number(file, a, key, value);
    return out;
  }

  // A <Patch> as OpenMM's ForceField.loadFile reads it.
  void read_patch(const std::string& file, const XmlElement& p) {
    ++ff_.num_patches;
    FFPatch patch;
    patch.name = required(file, p, "name");
    patch.source = {file, p.line};
    if (p.has("residues")) patch.num_residues = integer(file, p, "residues");
    if (patch.num_residues < 1)
      fail(file, p, fmt::format("patch '{}' has residues=\"{}\"; it must be 1 or more", patch.name, patch.num_residues));
    const auto check_ref = [&](const XmlElement& e, const FFPatchAtomRef& ref) {
      if (ref.residue < 0 || ref.residue >= patch.num_residues)
        fail(file, e, fmt::format("patch '{}' names residue {} of a patch with {} residue(s)", patch.name,
                                  ref.residue + 1, patch.num_residues));
      return ref;
    };
    const auto note_name = [&](const XmlElement& e, const std::string& name) {
      if (std::find(patch.all_atom_names.begin(), patch.all_atom_names.end(), name) != patch.all_atom_names.end())
        fail(file, e, fmt::format("patch '{}' contains multiple atoms named '{}'", patch.name, name));
      patch.all_atom_names.push_back(name);
    };
    for (const auto& c : p.children) {
      if (c.tag == "AddAtom" || c.tag == "ChangeAtom") {
        FFPatchAtom atom = patch_atom(file, c, patch);
        check_ref(c, {atom.residue, atom.atom.name});
        note_name(c, required(file, c, "name"));
        (c.tag == "AddAtom" ? patch.added : patch.changed).push_back(std::move(atom));
      } else if (c.tag == "RemoveAtom") {
        note_name(c, required(file, c, "name"));
        patch.removed.push_back(check_ref(c, patch_atom_ref(required(file, c, "name"))));
      } else if (c.tag == "AddBond" || c.tag == "RemoveBond") {
        auto bond = std::make_pair(check_ref(c, patch_atom_ref(required(file, c, "atomName1"))),
                                   check_ref(c, patch_atom_ref(required(file, c, "atomName2"))));
        (c.tag == "AddBond" ? patch.added_bonds : patch.removed_bonds).push_back(std::move(bond));
      } else if (c.tag == "AddExternalBond" || c.tag == "RemoveExternalBond") {
        const FFPatchAtomRef ref = check_ref(c, patch_atom_ref(required(file, c, "atomName")));
        (c.tag == "AddExternalBond" ? patch.added_external_bonds : patch.removed_external_bonds).push_back(ref);
      } else if (c.tag == "VirtualSite") {
        patch.has_virtual_sites = true;
      } else if (c.tag == "ApplyToResidue") {
        register_template_patch(patch.name, required(file, c, "name"), false);
      }
    }
    for (auto& existing : ff_.patches)
      if (existing.name == patch.name) {
        existing = std::move(patch);
        return;
      }
    ff_.patches.push_back(std::move(patch));
  }

  static void check_root(const XmlDocument& doc) {
    if (doc.root.tag != "ForceField")
      fail(doc.path, doc.root,
           fmt::format("expected an OpenMM force field file with root element <ForceField>, found <{}>", doc.root.tag));
  }

  void read_atom_types(const std::string& file, const XmlElement& section) {
    for (const auto& t : section.children) {
      if (t.tag != "Type") continue;
      FFAtomType type;
      type.name = required(file, t, "name");
      type.atom_class = required(file, t, "class");
      type.mass_amu = number(file, t, "mass");
      if (type.mass_amu < 0.0)
        fail(file, t, fmt::format("atom type '{}' has mass {} amu; a mass must be zero (a massless extra "
                                  "particle) or positive",
                                  type.name, type.mass_amu));
      if (const std::string* el = t.find_attribute("element")) {
        if (!el->empty() && find_element(*el) == nullptr)  // OpenMM's elem.get_by_symbol fails on it too
          fail(file, t, fmt::format("atom type '{}' has element=\"{}\", which is not an element symbol (e.g. C, "
                                    "O, Na; leave the attribute out for a massless extra particle)",
                                    type.name, *el));
        type.element = normalise_element_symbol(*el);
      }
      type.source = {file, t.line};
      if (auto it = ff_.type_index.find(type.name); it != ff_.type_index.end()) {
        const auto& first = ff_.atom_types[static_cast<std::size_t>(it->second)].source;
        fail(file, t, fmt::format("atom type '{}' is defined twice (first at {}:{})", type.name, first.file, first.line));
      }
      ff_.type_index.emplace(type.name, static_cast<int>(ff_.atom_types.size()));
      classes_.insert(type.atom_class);
      ff_.atom_types.push_back(std::move(type));
    }
  }

  static int template_atom(const std::string& file, const XmlElement& e, const FFResidueTemplate& t,
                           const std::unordered_map<std::string, int>& by_name, const std::string& key) {
    const std::string name = required(file, e, key);
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      std::string names;
      for (const auto& a : t.atoms) names += (names.empty() ? "" : " ") + a.name;
      fail(file, e, fmt::format("atom name '{}' not found in residue template '{}' (atoms: {})", name, t.name, names));
    }
    return it->second;
  }

  static int template_index_attr(const std::string& file, const XmlElement& e, const FFResidueTemplate& t,
                                 const std::string& key) {
    const int i = integer(file, e, key);
    if (i < 0 || i >= static_cast<int>(t.atoms.size()))
      fail(file, e, fmt::format("atom index {} out of range for residue template '{}' with {} atoms", i, t.name,
                                t.atoms.size()));
    return i;
  }

  // A site or parent atom: by name (`siteName`, `atomName<i>`) when the site names its site, else by index
  // (`index`, `atom<i>`), as OpenMM's _VirtualSiteData reads them.
  static int site_atom(const std::string& file, const XmlElement& e, const FFResidueTemplate& t,
                       const std::unordered_map<std::string, int>& by_name, const std::string& name_key,
                       const std::string& index_key) {
    return e.has("siteName") ? template_atom(file, e, t, by_name, name_key) : template_index_attr(file, e, t, index_key);
  }

  // The parameters of one <VirtualSite> by its type; returns the number of parents.
  static int read_site_parameters(const std::string& file, const XmlElement& e, FFVirtualSite& v) {
    const std::string& type = required(file, e, "type");
    if (type == "average2" || type == "average3") {
      v.type = type == "average2" ? FFVirtualSiteType::Average2 : FFVirtualSiteType::Average3;
      const int n = type == "average2" ? 2 : 3;
      for (int i = 1; i <= n; ++i) v.weights.push_back(number(file, e, "weight" + std::to_string(i)));
      return n;
    }
    if (type == "outOfPlane") {
      v.type = FFVirtualSiteType::OutOfPlane;
      for (const char* key : {"weight12", "weight13", "weightCross"}) v.weights.push_back(number(file, e, key));
      return 3;
    }
    if (type == "localCoords") {
      v.type = FFVirtualSiteType::LocalCoords;
      int n = 0;
      while (e.has("wo" + std::to_string(n + 1))) {
        const std::string i = std::to_string(++n);
        v.origin_weights.push_back(number(file, e, "wo" + i));
        v.x_weights.push_back(number(file, e, "wx" + i));
        v.y_weights.push_back(number(file, e, "wy" + i));
      }
      if (n != 3)
        fail(file, e, fmt::format("<VirtualSite type=\"localCoords\"> has {} parent atoms (wo1..wo{}); mdsim supports "
                                  "local-coordinates sites with exactly 3 (wo1..wo3, wx1..wx3, wy1..wy3)",
                                  n, n));
      for (std::size_t k = 0; k < 3; ++k) v.local_position_nm[k] = number(file, e, "p" + std::to_string(k + 1));
      return 3;
    }
    fail(file, e, fmt::format("<VirtualSite> type \"{}\" is unknown; use average2, average3, outOfPlane or "
                              "localCoords",
                              type));
  }

  FFVirtualSite read_virtual_site(const std::string& file, const XmlElement& e, const FFResidueTemplate& t,
                                  const std::unordered_map<std::string, int>& by_name) const {
    FFVirtualSite v;
    v.source = {file, e.line};
    const int n = read_site_parameters(file, e, v);
    v.site = site_atom(file, e, t, by_name, "siteName", "index");
    for (int i = 1; i <= n; ++i) {
      const std::string k = std::to_string(i);
      v.parents.push_back(site_atom(file, e, t, by_name, "atomName" + k, "atom" + k));
    }
    v.exclude_with = e.has("excludeWith") ? template_index_attr(file, e, t, "excludeWith") : v.parents.front();
    if (v.exclude_with == v.site)
      fail(file, e, fmt::format("<VirtualSite> excludeWith=\"{}\" names the site itself; give the index of the atom "
                                "whose exclusions the site shares (default: its first parent)",
                                v.exclude_with));
    const auto& site = t.atoms[static_cast<std::size_t>(v.site)];
    for (std::size_t i = 0; i < v.parents.size(); ++i)
      for (std::size_t j = 0; j < i + 1; ++j)
        if (v.parents[i] == v.site || (j < i && v.parents[i] == v.parents[j]))
          fail(file, e, fmt::format("<VirtualSite> for '{}' in residue template '{}' names atom '{}' twice (site and "
                                    "parents must be different atoms)",
                                    site.name, t.name, t.atoms[static_cast<std::size_t>(v.parents[i])].name));
    const FFAtomType& type = ff_.atom_types[static_cast<std::size_t>(ff_.type_index.at(site.type))];
    if (type.mass_amu != 0.0)
      fail(file, e, fmt::format("virtual site '{}' of residue template '{}' has atom type '{}' with mass {} amu; a "
                                "virtual site must be massless (mass=\"0\" in its <Type>)",
                                site.name, t.name, type.name, type.mass_amu));
    return v;
  }

  void read_residues(const std::string& file, const XmlElement& section) {
    for (const auto& r : section.children) {
      if (r.tag != "Residue") continue;
      FFResidueTemplate t;
      t.name = required(file, r, "name");
      t.source = {file, r.line};
      if (r.has("override")) t.override_level = integer(file, r, "override");
      if (const std::string* rw = r.find_attribute("rigidWater")) {
        std::string v;
        for (char c : *rw) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        t.rigid_water = (v == "true");
      }
      std::unordered_map<std::string, int> by_name;
      for (const auto& a : r.children) {
        if (a.tag != "Atom") continue;
        FFTemplateAtom atom;
        atom.name = required(file, a, "name");
        atom.type = required(file, a, "type");
        if (!ff_.type_index.count(atom.type))
          fail(file, a, fmt::format("residue template '{}' atom '{}' uses atom type '{}', which no <AtomTypes> defines",
                                    t.name, atom.name, atom.type));
        for (const auto& [key, value] : a.attributes)
          if (key != "name" && key != "type") atom.parameters[key] = to_number(file, a, key, value);
        if (!by_name.emplace(atom.name, static_cast<int>(t.atoms.size())).second)
          fail(file, a, fmt::format("residue template '{}' contains two atoms named '{}'", t.name, atom.name));
        t.atoms.push_back(std::move(atom));
      }
      for (const auto& c : r.children) {
        if (c.tag == "VirtualSite") {
          t.virtual_sites.push_back(read_virtual_site(file, c, t, by_name));
        } else if (c.tag == "Bond") {
          int a1 = 0, a2 = 0;
          if (c.has("atomName1")) {
            a1 = template_atom(file, c, t, by_name, "atomName1");
            a2 = template_atom(file, c, t, by_name, "atomName2");
          } else {
            a1 = template_index_attr(file, c, t, "from");
            a2 = template_index_attr(file, c, t, "to");
          }
          t.bonds.emplace_back(a1, a2);
        } else if (c.tag == "ExternalBond") {
          t.external_bonds.push_back(c.has("atomName") ? template_atom(file, c, t, by_name, "atomName")
                                                       : template_index_attr(file, c, t, "from"));
        } else if (c.tag == "AllowPatch") {
          t.allowed_patches.push_back(required(file, c, "name"));
        }
      }
      register_template(file, r, std::move(t));
    }
  }

  // OpenMM's registerResidueTemplate: a higher `override` replaces, a lower one is dropped, equal is an error.
  void register_template(const std::string& file, const XmlElement& r, FFResidueTemplate t) {
    auto it = template_index_.find(t.name);
    if (it != template_index_.end()) {
      auto& existing = ff_.templates[static_cast<std::size_t>(it->second)];
      if (t.override_level < existing.override_level) return;
      if (t.override_level == existing.override_level)
        fail(file, r, fmt::format("residue template '{}' is defined twice with the same override level {} (first at "
                                  "{}:{}); give one of them a higher `override`",
                                  t.name, t.override_level, existing.source.file, existing.source.line));
      // Replace: OpenMM removes the old one and appends the new one to the end of the registration order.
      const int removed = it->second;
      ff_.templates.erase(ff_.templates.begin() + removed);
      for (auto& [name, index] : template_index_)
        if (index > removed) --index;
      template_index_.erase(t.name);
    }
    template_index_.emplace(t.name, static_cast<int>(ff_.templates.size()));
    ff_.templates.push_back(std::move(t));
  }

  // OpenMM's _findAtomTypes: false when a type or class is unknown (the definition is then skipped, as OpenMM).
  bool type_specs(const std::string& file, const XmlElement& e, int count, FFTypeSpec* out) const {
    bool known = true;
    for (int i = 0; i < count; ++i) {
      const std::string suffix = count == 1 ? "" : std::to_string(i + 1);
      const std::string* cls = e.find_attribute("class" + suffix);
      const std::string* type = e.find_attribute("type" + suffix);
      if (cls != nullptr && type != nullptr)
        fail(file, e, fmt::format("<{}> gives both `class{}` and `type{}` for the same atom", e.tag, suffix, suffix));
      if (cls == nullptr && type == nullptr)
        fail(file, e, fmt::format("<{}> needs `type{}` or `class{}`", e.tag, suffix, suffix));
      if (cls != nullptr) {
        if (cls->empty()) {
          out[i] = {FFSpecKind::Wildcard, ""};
        } else {
          out[i] = {FFSpecKind::Class, *cls};
          if (!classes_.count(*cls)) known = false;
        }
      } else {
        if (type->empty()) {
          out[i] = {FFSpecKind::Wildcard, ""};
        } else {
          out[i] = {FFSpecKind::Type, *type};
          if (!ff_.type_index.count(*type)) known = false;
        }
      }
    }
    return known;
  }

  bool torsion(const std::string& file, const XmlElement& e, ImproperOrdering ordering, FFTorsionDef& t) const {
    if (!type_specs(file, e, 4, t.atoms.data())) return false;
    for (int n = 1; e.has("phase" + std::to_string(n)); ++n) {
      const std::string s = std::to_string(n);
      t.periodicity.push_back(integer(file, e, "periodicity" + s));
      t.phase_rad.push_back(number(file, e, "phase" + s));
      t.k_kj_per_mol.push_back(number(file, e, "k" + s));
    }
    t.ordering = ordering;
    t.source = {file, e.line};
    return true;
  }

  void read_force_section(const std::string& file, const XmlElement& section) {
    const std::string& tag = section.tag;
    if (tag == "Info" || tag == "AtomTypes" || tag == "Residues" || tag == "Patches" || tag == "Include") return;
    if (tag == "HarmonicBondForce") {
      ff_.has_harmonic_bond_force = true;
      for (const auto& b : section.children) {
        if (b.tag != "Bond") continue;
        FFBondDef def;
        if (!type_specs(file, b, 2, def.atoms.data())) continue;
        def.length_nm = number(file, b, "length");
        def.k_kj_per_mol_nm2 = number(file, b, "k");
        def.source = {file, b.line};
        ff_.bonds.push_back(std::move(def));
      }
    } else if (tag == "HarmonicAngleForce") {
      ff_.has_harmonic_angle_force = true;
      for (const auto& a : section.children) {
        if (a.tag != "Angle") continue;
        FFAngleDef def;
        if (!type_specs(file, a, 3, def.atoms.data())) continue;
        def.angle_rad = number(file, a, "angle");
        def.k_kj_per_mol_rad2 = number(file, a, "k");
        def.source = {file, a.line};
        ff_.angles.push_back(std::move(def));
      }
    } else if (tag == "PeriodicTorsionForce") {
      ff_.has_periodic_torsion_force = true;
      ImproperOrdering ordering = ImproperOrdering::Default;
      if (const std::string* o = section.find_attribute("ordering")) {
        if (*o == "default") ordering = ImproperOrdering::Default;
        else if (*o == "amber") ordering = ImproperOrdering::Amber;
        else if (*o == "charmm") ordering = ImproperOrdering::Charmm;
        else if (*o == "smirnoff") ordering = ImproperOrdering::Smirnoff;
        else
          fail(file, section, fmt::format("unknown improper ordering \"{}\" (expected default, amber, charmm or smirnoff)", *o));
      }
      for (const auto& t : section.children) {
        if (t.tag == "Proper") {
          FFTorsionDef def;
          if (torsion(file, t, ImproperOrdering::Default, def)) ff_.propers.push_back(std::move(def));
        } else if (t.tag == "Improper") {
          FFTorsionDef def;
          if (torsion(file, t, ordering, def)) ff_.impropers.push_back(std::move(def));
        }
      }
    } else if (tag == "NonbondedForce") {
      read_nonbonded(file, section);
    } else if (tag == "AmoebaUreyBradleyForce") {
      read_urey_bradley(file, section);
    } else if (tag == "CustomTorsionForce") {
      read_custom_torsion(file, section);
    } else if (tag == "CMAPTorsionForce") {
      read_cmap(file, section);
    } else if (tag == "LennardJonesForce") {
      read_lennard_jones(file, section);
    } else {
      fail(file, section,
           fmt::format("unsupported force field section <{}>: mdsim reads HarmonicBondForce, HarmonicAngleForce, "
                       "PeriodicTorsionForce, NonbondedForce, AmoebaUreyBradleyForce, CustomTorsionForce (harmonic "
                       "impropers), CMAPTorsionForce and LennardJonesForce",
                       tag));
    }
  }

  void read_urey_bradley(const std::string& file, const XmlElement& section) {
    for (const auto& u : section.children) {
      if (u.tag != "UreyBradley") continue;
      FFUreyBradleyDef def;
      if (!type_specs(file, u, 3, def.atoms.data())) continue;
      def.r13_nm = number(file, u, "d");
      def.k_kj_per_mol_nm2 = number(file, u, "k");
      def.source = {file, u.line};
      ff_.urey_bradleys.push_back(std::move(def));
    }
  }

  // Only CHARMM's harmonic improper, k*(theta-theta0)^2 with per-torsion k and theta0.
  void read_custom_torsion(const std::string& file, const XmlElement& section) {
    std::string energy;
    for (char c : required(file, section, "energy"))
      if (!std::isspace(static_cast<unsigned char>(c))) energy += c;
    std::vector<std::string> parameters;
    for (const auto& c : section.children) {
      if (c.tag == "PerTorsionParameter") parameters.push_back(required(file, c, "name"));
      if (c.tag == "GlobalParameter" || c.tag == "Proper")
        fail(file, c, fmt::format("<CustomTorsionForce> <{}> is not supported: mdsim reads the harmonic impropers "
                                  "k*(theta-theta0)^2 only",
                                  c.tag));
    }
    std::sort(parameters.begin(), parameters.end());
    if (energy != "k*(theta-theta0)^2" || parameters != std::vector<std::string>{"k", "theta0"})
      fail(file, section, fmt::format("<CustomTorsionForce energy=\"{}\"> is not supported: mdsim reads CHARMM's "
                                      "harmonic improper energy=\"k*(theta-theta0)^2\" with <PerTorsionParameter> k "
                                      "and theta0 only",
                                      energy));
    ImproperOrdering ordering = ImproperOrdering::Charmm;  // CustomTorsion's default
    if (const std::string* o = section.find_attribute("ordering")) {
      if (*o == "default") ordering = ImproperOrdering::Default;
      else if (*o == "amber") ordering = ImproperOrdering::Amber;
      else if (*o == "charmm") ordering = ImproperOrdering::Charmm;
      else fail(file, section, fmt::format("unknown improper ordering \"{}\" (expected default, amber or charmm)", *o));
    }
    for (const auto& t : section.children) {
      if (t.tag != "Improper") continue;
      FFHarmonicImproperDef def;
      if (!type_specs(file, t, 4, def.atoms.data())) continue;
      def.k_kj_per_mol_rad2 = number(file, t, "k");
      def.theta0_rad = number(file, t, "theta0");
      def.ordering = ordering;
      def.source = {file, t.line};
      ff_.harmonic_impropers.push_back(std::move(def));
    }
  }

  void read_cmap(const std::string& file, const XmlElement& section) {
    ff_.has_cmap_torsion_force = true;
    for (const auto& m : section.children) {
      if (m.tag != "Map") continue;
      std::vector<double> values;
      std::istringstream in(m.text);
      std::string word;
      while (in >> word) values.push_back(to_number(file, m, "(text)", word));
      const auto size = static_cast<std::size_t>(std::llround(std::sqrt(static_cast<double>(values.size()))));
      if (size < 2 || size * size != values.size())
        fail(file, m, fmt::format("<Map> has {} values; a CMAP map needs size x size values (size 2 or more)",
                                  values.size()));
      ff_.cmap_maps.push_back(std::move(values));
    }
    for (const auto& t : section.children) {
      if (t.tag != "Torsion") continue;
      FFCmapDef def;
      if (!type_specs(file, t, 5, def.atoms.data())) continue;
      def.map = integer(file, t, "map");
      // As OpenMM: the index counts every <Map> read so far (all files share one CMAPTorsionForce).
      if (def.map < 0 || def.map >= static_cast<int>(ff_.cmap_maps.size()))
        fail(file, t, fmt::format("<Torsion map=\"{}\"> names no <Map> (the file has maps {}..{})", def.map, 0,
                                  static_cast<int>(ff_.cmap_maps.size()) - 1));
      def.source = {file, t.line};
      ff_.cmap_torsions.push_back(std::move(def));
    }
  }

  void read_lennard_jones(const std::string& file, const XmlElement& section) {
    const double lj14 = number(file, section, "lj14scale");
    if (ff_.has_lennard_jones_force && std::fabs(ff_.lennard_jones_lj14scale - lj14) > 1e-5)
      fail(file, section, "<LennardJonesForce> lj14scale differs from that of an earlier file");
    if (!ff_.has_lennard_jones_force) ff_.lennard_jones_lj14scale = lj14;
    ff_.has_lennard_jones_force = true;
    if (const std::string* d = section.find_attribute("useDispersionCorrection"))
      ff_.lennard_jones_dispersion_correction = *d == "True" || *d == "true" || *d == "1";
    for (const auto& a : section.children) {
      if (a.tag == "Atom") {
        FFLennardJonesAtom atom;
        if (!type_specs(file, a, 1, &atom.atom)) continue;
        atom.sigma_nm = number(file, a, "sigma");
        atom.epsilon_kj_per_mol = number(file, a, "epsilon");
        if (a.has("sigma14")) atom.sigma14_nm = number(file, a, "sigma14");
        if (a.has("epsilon14")) atom.epsilon14_kj_per_mol = number(file, a, "epsilon14");
        if (atom.sigma_nm < 0.0 || atom.epsilon_kj_per_mol < 0.0)
          fail(file, a, "Lennard-Jones sigma (nm) and epsilon (kJ/mol) must be zero or positive");
        atom.source = {file, a.line};
        ff_.lennard_jones_atoms.push_back(std::move(atom));
      } else if (a.tag == "NBFixPair") {
        FFNbfixPair pair;
        if (!type_specs(file, a, 2, pair.atoms.data())) continue;
        pair.sigma_nm = number(file, a, "sigma");
        pair.epsilon_kj_per_mol = number(file, a, "epsilon");
        pair.source = {file, a.line};
        ff_.nbfix_pairs.push_back(std::move(pair));
      }
    }
  }

  void read_nonbonded(const std::string& file, const XmlElement& section) {
    const double c14 = number(file, section, "coulomb14scale");
    const double lj14 = number(file, section, "lj14scale");
    std::optional<bool> dispersion;
    if (const std::string* d = section.find_attribute("useDispersionCorrection")) {
      std::string v;
      for (char c : *d) v += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (v == "true" || v == "1") dispersion = true;
      else if (v == "false" || v == "0") dispersion = false;
      else fail(file, section, fmt::format("useDispersionCorrection=\"{}\" is not True or False", *d));
    }
    if (!ff_.has_nonbonded_force) {
      ff_.has_nonbonded_force = true;
      ff_.coulomb14scale = c14;
      ff_.lj14scale = lj14;
      ff_.use_dispersion_correction = dispersion;
    } else {
      constexpr double kScaleTolerance = 1e-5;  // OpenMM's NonbondedGenerator.SCALETOL
      if (std::fabs(ff_.coulomb14scale - c14) > kScaleTolerance || std::fabs(ff_.lj14scale - lj14) > kScaleTolerance)
        fail(file, section,
             fmt::format("<NonbondedForce> 1-4 scales ({}, {}) differ from those of an earlier file ({}, {})", c14,
                         lj14, ff_.coulomb14scale, ff_.lj14scale));
      if (ff_.use_dispersion_correction && dispersion && *ff_.use_dispersion_correction != *dispersion)
        fail(file, section, "<NonbondedForce> useDispersionCorrection differs from that of an earlier file");
      if (!ff_.use_dispersion_correction) ff_.use_dispersion_correction = dispersion;
    }
    std::vector<std::string> expected{"charge", "sigma", "epsilon"};
    std::vector<std::string> from_residue;
    for (const auto& u : section.children) {
      if (u.tag != "UseAttributeFromResidue") continue;
      const std::string name = required(file, u, "name");
      auto it = std::find(expected.begin(), expected.end(), name);
      if (it == expected.end())
        fail(file, u, fmt::format("<UseAttributeFromResidue> names \"{}\"; expected charge, sigma or epsilon", name));
      expected.erase(it);
      from_residue.push_back(name);
      if (std::find(ff_.nonbonded_from_residue.begin(), ff_.nonbonded_from_residue.end(), name) ==
          ff_.nonbonded_from_residue.end())
        ff_.nonbonded_from_residue.push_back(name);
    }
    for (const auto& a : section.children) {
      if (a.tag != "Atom") continue;
      for (const auto& name : from_residue)
        if (a.has(name))
          fail(file, a, fmt::format("attribute `{}` appears both here and in <UseAttributeFromResidue>", name));
      FFNonbondedAtom atom;
      if (!type_specs(file, a, 1, &atom.atom)) continue;
      if (atom.atom.kind == FFSpecKind::Wildcard)
        fail(file, a, "a <NonbondedForce> <Atom> must name a type or a class, not the wildcard \"\"");
      for (const auto& key : expected) {
        atom.values[key] = number(file, a, key);
        if (key != "charge" && atom.values[key] < 0.0)
          fail(file, a, fmt::format("{} = {} is negative; Lennard-Jones {} must be zero or positive", key,
                                    atom.values[key], key == "sigma" ? "sigma (nm)" : "epsilon (kJ/mol)"));
      }
      atom.source = {file, a.line};
      ff_.nonbonded_atoms.push_back(std::move(atom));
    }
  }
};

}  // namespace

// ---------------------------------------------------------------- file resolution

namespace {
std::string& bundled_data_root() {
  static std::string root;
  return root;
}
}  // namespace

void set_bundled_data_root(const std::string& folder) { bundled_data_root() = folder; }

std::vector<std::string> bundled_dirs(const std::string& share_subfolder, const std::string& source_dir) {
  std::vector<std::string> dirs;
  std::error_code ec;
  if (!bundled_data_root().empty() && fs::is_directory(fs::path(bundled_data_root()) / share_subfolder, ec))
    dirs.push_back((fs::path(bundled_data_root()) / share_subfolder).string());
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path() / ".." / "share" / "mdsim" / share_subfolder;
    if (fs::is_directory(installed, ec)) dirs.push_back(fs::weakly_canonical(installed, ec).string());
  }
  if (!source_dir.empty() && fs::is_directory(fs::path(source_dir), ec)) dirs.push_back(source_dir);
  return dirs;
}

std::vector<std::string> default_forcefield_dirs() {
#ifdef MDSIM_SOURCE_FORCEFIELD_DIR
  return bundled_dirs("forcefields", MDSIM_SOURCE_FORCEFIELD_DIR);
#else
  return bundled_dirs("forcefields", "");
#endif
}

std::string resolve_forcefield_path(const std::string& name, const std::string& base_dir,
                                    const std::vector<std::string>& search_dirs) {
  const fs::path p(name);
  if (p.is_absolute()) {
    if (file_exists(p)) return p.string();
    throw InputError(located(name, 0, 0, "force field file not found"));
  }
  for (const auto& dir : search_dirs)
    if (file_exists(fs::path(dir) / p)) return (fs::path(dir) / p).string();
  const fs::path relative = base_dir.empty() ? p : fs::path(base_dir) / p;
  if (file_exists(relative)) return relative.string();
  std::string searched;
  for (const auto& dir : search_dirs) searched += (searched.empty() ? "" : ", ") + dir;
  searched += (searched.empty() ? "" : ", ") + (base_dir.empty() ? std::string(".") : base_dir);
  throw InputError(fmt::format("force field file '{}' not found; searched the folders: {}", name, searched));
}

StandardResidueData load_standard_residue_data(const std::string& dir) {
  StandardResidueData data;
  const XmlDocument residues = parse_xml_file((fs::path(dir) / "residues.xml").string());
  for (const auto& r : residues.root.children) {
    if (r.tag != "Residue") continue;
    auto& bonds = data.bonds[required(residues.path, r, "name")];
    bonds.clear();
    for (const auto& b : r.children)
      if (b.tag == "Bond") bonds.emplace_back(required(residues.path, b, "from"), required(residues.path, b, "to"));
  }
  // pdbNames.xml, read as OpenMM's PDBFile._loadNameReplacementTables does.
  const XmlDocument names = parse_xml_file((fs::path(dir) / "pdbNames.xml").string());
  using AtomMap = std::unordered_map<std::string, std::string>;
  auto add_atoms = [](const XmlElement& residue, AtomMap& map) {
    for (const auto& a : residue.children) {
      if (a.tag != "Atom") continue;
      const std::string* name = a.find_attribute("name");
      if (name == nullptr) continue;
      for (const auto& [key, value] : a.attributes) map[value] = *name;
    }
  };
  AtomMap all, protein, nucleic;
  for (const auto& r : names.root.children) {
    if (r.tag != "Residue") continue;
    const std::string name = required(names.path, r, "name");
    if (name == "All") add_atoms(r, all);
    else if (name == "Protein") add_atoms(r, protein);
    else if (name == "Nucleic") add_atoms(r, nucleic);
  }
  for (const auto& [alt, standard] : all) {
    protein[alt] = standard;
    nucleic[alt] = standard;
  }
  for (const auto& r : names.root.children) {
    if (r.tag != "Residue") continue;
    const std::string name = required(names.path, r, "name");
    for (const auto& [key, value] : r.attributes)
      if (key == "name" || key.rfind("alt", 0) == 0) data.residue_aliases[value] = name;
    const std::string* type = r.find_attribute("type");
    AtomMap atoms = type == nullptr ? all : *type == "Protein" ? protein : *type == "Nucleic" ? nucleic : all;
    add_atoms(r, atoms);
    data.atom_aliases[name] = std::move(atoms);
  }
  data.loaded = true;
  return data;
}

ForceFieldData parse_forcefield_xml(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  std::vector<XmlDocument> docs;
  docs.push_back(parse_xml(in, source));
  ForceFieldData ff;
  ff.files.push_back(source);
  Loader(ff).load(docs);
  return ff;
}

ForceFieldData load_forcefields(const std::vector<std::string>& names, const std::string& base_dir,
                                const std::vector<std::string>& search_dirs) {
  if (names.empty()) throw InputError("no force field files given");
  std::vector<XmlDocument> docs;
  std::unordered_set<std::string> seen;
  std::vector<std::string> queue;
  for (const auto& name : names) {
    const std::string path = resolve_forcefield_path(name, base_dir, search_dirs);
    if (seen.insert(canonical_key(path)).second) queue.push_back(path);
  }
  for (std::size_t i = 0; i < queue.size(); ++i) {
    docs.push_back(parse_xml_file(queue[i]));
    const XmlDocument& doc = docs.back();
    const fs::path parent = fs::path(doc.path).parent_path();
    for (const auto& inc : doc.root.children) {
      if (inc.tag != "Include") continue;
      const std::string file = required(doc.path, inc, "file");
      std::string path;
      if (file_exists(parent / file)) {
        path = (parent / file).string();
      } else {
        try {
          path = resolve_forcefield_path(file, base_dir, search_dirs);
        } catch (const InputError& e) {
          throw InputError(located(doc.path, inc.line, 0,
                                   fmt::format("included file '{}' not found next to this file ({}); {}", file,
                                               parent.string(), e.what())));
        }
      }
      if (seen.insert(canonical_key(path)).second) queue.push_back(path);
    }
  }
  ForceFieldData ff;
  for (const auto& doc : docs) ff.files.push_back(doc.path);
  Loader(ff).load(docs);

  for (const auto& dir : search_dirs) {
    if (file_exists(fs::path(dir) / "residues.xml") && file_exists(fs::path(dir) / "pdbNames.xml")) {
      ff.standard = load_standard_residue_data(dir);
      break;
    }
  }
  if (!ff.standard.loaded) {
    std::string searched;
    for (const auto& dir : search_dirs) searched += (searched.empty() ? "" : ", ") + dir;
    throw InputError(fmt::format(
        "OpenMM's standard residue tables residues.xml and pdbNames.xml (bundled in mdsim's forcefields folder) "
        "were not found; searched: {}",
        searched.empty() ? std::string("(no folders)") : searched));
  }
  return ff;
}

}  // namespace mdsim
