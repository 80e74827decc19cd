// The `mdsim` extension's topology part: the structure's atoms, residues and chains as Python values
// (python/mdsim/__init__.py wraps them in mdsim.Topology).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>

#include "python/module_parts.hpp"

namespace py = pybind11;

namespace mdsim::python {

py::dict topology_dict(const Topology& t) {
  const std::size_t n = t.atoms.size();
  py::list names, elements, residue_names, chain_ids;
  py::array_t<std::int64_t> residue_numbers(static_cast<py::ssize_t>(n)), residue_index(static_cast<py::ssize_t>(n));
  auto rn = residue_numbers.mutable_unchecked<1>();
  auto ri = residue_index.mutable_unchecked<1>();
  for (std::size_t i = 0; i < n; ++i) {
    const TopologyAtom& a = t.atoms[i];
    const TopologyResidue& r = t.residues[static_cast<std::size_t>(a.residue)];
    names.append(a.name);
    elements.append(a.element);
    residue_names.append(r.name);
    chain_ids.append(t.chains[static_cast<std::size_t>(r.chain)].id);
    rn(static_cast<py::ssize_t>(i)) = r.number;
    ri(static_cast<py::ssize_t>(i)) = a.residue;
  }
  py::dict d;
  d["atom_names"] = names;
  d["elements"] = elements;
  d["residue_names"] = residue_names;
  d["residue_numbers"] = residue_numbers;
  d["residue_index"] = residue_index;
  d["chain_ids"] = chain_ids;
  return d;
}

}  // namespace mdsim::python
