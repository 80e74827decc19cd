// The `mdsim` extension's topology part: the structure's atoms, residues, chains and bonds as Python values
// (python/mdsim/topology.py wraps them in mdsim.Topology), and a structure file's topology without a Simulation.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "io/forcefield_xml.hpp"
#include "io/structure_reader.hpp"
#include "model/forcefield.hpp"
#include "python/module_parts.hpp"

namespace py = pybind11;

namespace mdsim::python {

namespace {

py::array_t<std::int64_t> int64_array(py::ssize_t n) { return py::array_t<std::int64_t>(n); }

// Per residue: names, numbers (resSeq), insertion codes ("" for none), chain indices.
py::dict residues_dict(const Topology& t) {
  const auto n = static_cast<py::ssize_t>(t.residues.size());
  py::list names, codes;
  py::array_t<std::int64_t> numbers = int64_array(n), chain_index = int64_array(n);
  auto num = numbers.mutable_unchecked<1>();
  auto chain = chain_index.mutable_unchecked<1>();
  for (py::ssize_t r = 0; r < n; ++r) {
    const TopologyResidue& residue = t.residues[static_cast<std::size_t>(r)];
    names.append(residue.name);
    const char code = residue.insertion_code;
    codes.append(code == ' ' || code == '\0' ? std::string() : std::string(1, code));
    num(r) = residue.number;
    chain(r) = residue.chain;
  }
  py::dict d;
  d["names"] = names;
  d["numbers"] = numbers;
  d["insertion_codes"] = codes;
  d["chain_index"] = chain_index;
  return d;
}

// Topology::bonds as an (n_bonds, 2) int64 array of atom indices.
py::array_t<std::int64_t> bonds_array(const Topology& t) {
  py::array_t<std::int64_t> bonds({static_cast<py::ssize_t>(t.bonds.size()), py::ssize_t{2}});
  auto b = bonds.mutable_unchecked<2>();
  for (std::size_t k = 0; k < t.bonds.size(); ++k) {
    b(static_cast<py::ssize_t>(k), 0) = t.bonds[k].first;
    b(static_cast<py::ssize_t>(k), 1) = t.bonds[k].second;
  }
  return bonds;
}


// OpenMM's standard residue tables (residues.xml, pdbNames.xml) from the first force-field folder that has them,
// as load_forcefields finds them.
StandardResidueData standard_residue_data() {
  for (const std::string& dir : default_forcefield_dirs()) {
    const std::filesystem::path folder(dir);
    if (std::filesystem::exists(folder / "residues.xml") && std::filesystem::exists(folder / "pdbNames.xml"))
      return load_standard_residue_data(dir);
  }
  throw InputError("OpenMM's standard residue tables residues.xml and pdbNames.xml (bundled in mdsim's forcefields "
                   "folder) were not found in any force-field folder");
}

// A PDB or PDBx/mmCIF file's topology, its bonds made as OpenMM's PDBFile makes them (standard residues,
// disulfides, CONECT; create_topology_bonds with the bundled residues.xml and pdbNames.xml).
py::dict read_structure_topology(const std::string& path) {
  std::vector<std::string> notes;
  Topology topology = read_run_structure(path, &notes);
  create_topology_bonds(topology, standard_residue_data());
  py::dict d = topology_dict(topology);
  py::list note_list;
  for (const std::string& note : notes) note_list.append(note);
  d["notes"] = note_list;
  return d;
}

}  // namespace

py::array_t<double> box_array(const Boxd& box) {
  py::array_t<double> out({3, 3});
  auto m = out.mutable_unchecked<2>();
  const Vec3d rows[3] = {box.a, box.b, box.c};
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) m(r, c) = rows[r][c];
  return out;
}

py::dict topology_dict(const Topology& t) {
  const std::size_t n = t.atoms.size();
  py::list names, elements, residue_names, chain_ids;
  py::array_t<std::int64_t> residue_numbers = int64_array(static_cast<py::ssize_t>(n));
  py::array_t<std::int64_t> residue_index = int64_array(static_cast<py::ssize_t>(n));
  py::array_t<std::int64_t> serials = int64_array(static_cast<py::ssize_t>(n));
  auto rn = residue_numbers.mutable_unchecked<1>();
  auto ri = residue_index.mutable_unchecked<1>();
  auto sn = serials.mutable_unchecked<1>();
  bool any_serial = false;
  for (std::size_t i = 0; i < n; ++i) {
    const TopologyAtom& a = t.atoms[i];
    const TopologyResidue& r = t.residues[static_cast<std::size_t>(a.residue)];
    names.append(a.name);
    elements.append(a.element);
    residue_names.append(r.name);
    chain_ids.append(t.chains[static_cast<std::size_t>(r.chain)].id);
    rn(static_cast<py::ssize_t>(i)) = r.number;
    ri(static_cast<py::ssize_t>(i)) = a.residue;
    sn(static_cast<py::ssize_t>(i)) = a.serial;
    any_serial = any_serial || a.serial != 0;
  }
  py::list chain_list;
  for (const TopologyChain& c : t.chains) chain_list.append(c.id);
  py::dict d;
  d["atom_names"] = names;
  d["elements"] = elements;
  d["residue_names"] = residue_names;
  d["residue_numbers"] = residue_numbers;
  d["residue_index"] = residue_index;
  d["chain_ids"] = chain_ids;
  d["atom_serials"] = any_serial ? py::object(serials) : py::none();  // readers that number no atoms leave 0
  d["residues"] = residues_dict(t);
  d["chain_id_list"] = chain_list;
  d["bonds"] = bonds_array(t);
  d["box_nm"] = t.box ? py::object(box_array(*t.box)) : py::none();  // the structure's box, or None
  return d;
}

void bind_topology(py::module_& m) {
  m.def("_set_bundled_data_root", &set_bundled_data_root, py::arg("folder"),
        "The folder of the bundled forcefields/ and data/ (the pip package's share/mdsim), searched first");
  m.def("_forcefield_dirs", &default_forcefield_dirs, "The folders searched for bundled force-field names, in order");
  m.def("_read_structure_topology", &read_structure_topology, py::arg("path"),
        "A PDB or PDBx/mmCIF file's topology as a dict (Topology.from_file wraps it); bonds as OpenMM's PDBFile "
        "makes them");
}

}  // namespace mdsim::python
