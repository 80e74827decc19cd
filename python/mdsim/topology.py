"""mdsim.Topology: the structure's atoms, residues, chains and bonds in the System's atom order, as numpy arrays,
with conversions to MDTraj's and OpenMM's Topology."""
import json
import os
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ._mdsim import Simulation, _read_structure_topology

# Element symbols that mean "no element" (virtual sites / extra particles): OpenMM gives them element None.
_NO_ELEMENT = ("", "EP", "VS")


def _strings(values):
    """A numpy array of str (fixed-width unicode), also for an empty list."""
    return np.array(list(values), dtype=str) if len(values) else np.zeros(0, dtype="<U1")


@dataclass(frozen=True, eq=False)
class Atoms:
    """Per atom, index i = the atom's index in the System (sim.positions[i]).

    names: atom names (str array, "CA"); elements: element symbols (str array, "C", "Cl"; "" for a virtual site or
    an unknown element); residue_index: index into Topology.residues (int64); serials: the serial numbers the input
    gave (int64; None when the reader numbered no atom: GROMACS, CHARMM)."""
    names: np.ndarray
    elements: np.ndarray
    residue_index: np.ndarray
    serials: Optional[np.ndarray]

    def __len__(self):
        return len(self.names)


@dataclass(frozen=True, eq=False)
class Residues:
    """Per residue, in the topology's order. names ("ALA", "HOH"); numbers: resSeq as read (int64; OpenMM's
    Residue.id as a number); insertion_codes ("" for none); chain_index: index into Topology.chains (int64)."""
    names: np.ndarray
    numbers: np.ndarray
    insertion_codes: np.ndarray
    chain_index: np.ndarray

    def __len__(self):
        return len(self.names)


@dataclass(frozen=True, eq=False)
class Chains:
    """Per chain: ids (str array, "A"; may be " " or "" where the input had none)."""
    ids: np.ndarray

    def __len__(self):
        return len(self.ids)


class Topology:
    """The structure's topology in the System's atom order (sim.topology; Topology.from_file(path)).

    As arrays, for numpy selections (``heavy = np.flatnonzero(top.atoms.elements != "H")``):

    - ``atoms``: ``names``, ``elements`` (symbols), ``residue_index``, ``serials`` (an :class:`Atoms`)
    - ``residues``: ``names``, ``numbers`` (resSeq), ``insertion_codes``, ``chain_index`` (a :class:`Residues`)
    - ``chains``: ``ids`` (a :class:`Chains`)
    - ``bonds``: (n_bonds, 2) int64 atom indices: the chemical bonds (OpenMM's ``Topology.bonds()``: from the
      standard residue templates, disulfides and CONECT for a PDB/mmCIF; the topology file's bonds for AMBER, GROMACS
      and CHARMM; the System's bonds and constraints for a serialized System)
    - ``box_nm``: the input structure's periodic box (3 x 3, rows a, b, c, nm) or None; the current box of a
      simulation is ``sim.state()["box_nm"]``
    - ``n_atoms``, ``n_residues``, ``n_chains``, ``n_bonds``

    Per-atom lists, as earlier versions gave them: ``atom_names``, ``elements``, ``residue_names``, ``chain_ids``
    (lists of str, one per atom); ``residue_numbers``, ``residue_index`` (int64 arrays, one per atom).

    ``to_mdtraj()`` and ``to_openmm()`` convert (atom order, names, elements, residues, chains and bonds kept)."""

    def __init__(self, fields):
        self.atom_names = list(fields["atom_names"])
        self.elements = list(fields["elements"])
        self.residue_names = list(fields["residue_names"])
        self.residue_numbers = np.asarray(fields["residue_numbers"], dtype=np.int64)
        self.residue_index = np.asarray(fields["residue_index"], dtype=np.int64)
        self.chain_ids = list(fields["chain_ids"])
        serials = fields.get("atom_serials")
        self.atoms = Atoms(_strings(self.atom_names), _strings(self.elements), self.residue_index,
                           None if serials is None else np.asarray(serials, dtype=np.int64))
        r = fields["residues"]
        self.residues = Residues(_strings(r["names"]), np.asarray(r["numbers"], dtype=np.int64),
                                 _strings(r["insertion_codes"]), np.asarray(r["chain_index"], dtype=np.int64))
        self.chains = Chains(_strings(fields["chain_id_list"]))
        self.bonds = np.asarray(fields["bonds"], dtype=np.int64).reshape(-1, 2)
        box = fields.get("box_nm")
        self.box_nm = None if box is None else np.asarray(box, dtype=np.float64).reshape(3, 3)

    @classmethod
    def from_file(cls, path):
        """The topology of a PDB or PDBx/mmCIF file (.pdb, .cif, also .gz), as ``openmm.app.PDBFile(path).topology``:
        the same atoms, residues and chains as a simulation of it, bonds from OpenMM's standard residue templates,
        disulfides and CONECT records. Raises mdsim.InputError for a file it cannot read."""
        return cls(_read_structure_topology(os.fspath(path)))

    @property
    def n_atoms(self):
        """The number of atoms (particles, virtual sites included)."""
        return len(self.atom_names)

    @property
    def n_residues(self):
        """The number of residues."""
        return len(self.residues)

    @property
    def n_chains(self):
        """The number of chains."""
        return len(self.chains)

    @property
    def n_bonds(self):
        """The number of bonds (rows of ``bonds``)."""
        return len(self.bonds)

    def __len__(self):
        return self.n_atoms

    def __repr__(self):
        return (f"<mdsim.Topology: {self.n_atoms} atoms, {self.n_residues} residues, {self.n_chains} chains, "
                f"{self.n_bonds} bonds>")

    def subset(self, atom_indices):
        """The topology of the given atoms (sorted, unique indices), renumbered from 0 in that order; residues and
        chains without a selected atom are dropped, bonds kept where both atoms are selected."""
        keep = _sorted_indices(atom_indices, self.n_atoms, "subset(atom_indices)")
        new_index = np.full(self.n_atoms, -1, dtype=np.int64)
        new_index[keep] = np.arange(len(keep))
        residues = np.unique(self.residue_index[keep])
        residue_map = np.full(self.n_residues, -1, dtype=np.int64)
        residue_map[residues] = np.arange(len(residues))
        chains = np.unique(self.residues.chain_index[residues])
        chain_map = np.full(self.n_chains, -1, dtype=np.int64)
        chain_map[chains] = np.arange(len(chains))
        both = (new_index[self.bonds] >= 0).all(axis=1)
        per_atom = lambda values: [values[i] for i in keep]
        return Topology({
            "atom_names": per_atom(self.atom_names), "elements": per_atom(self.elements),
            "residue_names": per_atom(self.residue_names), "chain_ids": per_atom(self.chain_ids),
            "residue_numbers": self.residue_numbers[keep], "residue_index": residue_map[self.residue_index[keep]],
            "atom_serials": None if self.atoms.serials is None else self.atoms.serials[keep],
            "residues": {"names": self.residues.names[residues].tolist(), "numbers": self.residues.numbers[residues],
                         "insertion_codes": self.residues.insertion_codes[residues].tolist(),
                         "chain_index": chain_map[self.residues.chain_index[residues]]},
            "chain_id_list": self.chains.ids[chains].tolist(), "bonds": new_index[self.bonds[both]],
            "box_nm": self.box_nm})

    def to_mdtraj(self):
        """An mdtraj.Topology of the same atoms in the same order: names, elements (virtual sites as MDTraj's
        ``element.virtual``), residues (name, resSeq), chains (chain_id where MDTraj has it) and bonds. MDTraj has no
        insertion codes or atom serials beyond ``serial``. Needs the mdtraj package."""
        md = _require("mdtraj", "Topology.to_mdtraj()")
        top = md.Topology()
        with_id = "chain_id" in _parameters(top.add_chain)
        chains = []
        for chain_id in self.chains.ids.tolist():
            chain = top.add_chain(chain_id=chain_id) if with_id else top.add_chain()
            chain.chain_id = chain_id
            chains.append(chain)
        residues = [top.add_residue(name, chains[c], resSeq=int(number)) for name, number, c in
                    zip(self.residues.names.tolist(), self.residues.numbers.tolist(), self.residues.chain_index.tolist())]
        serials = self.atoms.serials.tolist() if self.atoms.serials is not None else [None] * self.n_atoms
        atoms = [top.add_atom(name, _mdtraj_element(md, symbol), residues[r], serial=serial) for name, symbol, r, serial in
                 zip(self.atom_names, self.elements, self.residue_index.tolist(), serials)]
        for i, j in self.bonds.tolist():
            top.add_bond(atoms[i], atoms[j])
        return top

    def to_openmm(self):
        """An openmm.app.Topology of the same atoms in the same order: names, elements by symbol (None for virtual
        sites / extra particles, element "" or "EP", as OpenMM's own), residues (name, id = resSeq as str,
        insertionCode), chains (id), atom ids (serials, when read), bonds, and the structure's box as
        periodic box vectors (nm) when it has one. Needs the openmm package."""
        _require("openmm", "Topology.to_openmm()")
        from openmm import Vec3, app, unit
        top = app.Topology()
        chains = [top.addChain(id=chain_id) for chain_id in self.chains.ids.tolist()]
        residues = [top.addResidue(name, chains[c], id=str(number), insertionCode=code) for name, number, code, c in
                    zip(self.residues.names.tolist(), self.residues.numbers.tolist(),
                        self.residues.insertion_codes.tolist(), self.residues.chain_index.tolist())]
        serials = self.atoms.serials.tolist() if self.atoms.serials is not None else [None] * self.n_atoms
        atoms = [top.addAtom(name, _openmm_element(app, symbol), residues[r], id=None if serial is None else str(serial))
                 for name, symbol, r, serial in zip(self.atom_names, self.elements, self.residue_index.tolist(), serials)]
        for i, j in self.bonds.tolist():
            top.addBond(atoms[i], atoms[j])
        if self.box_nm is not None:
            top.setPeriodicBoxVectors([Vec3(*row) for row in self.box_nm.tolist()] * unit.nanometer)
        return top

    @classmethod
    def _from_mdtraj_json(cls, text):
        """The topology an mdsim trajectory records in /topology (MDTraj's JSON: chains, residues, atoms, bonds)."""
        data = json.loads(text)
        atoms, residues, chain_ids = [], [], []
        for c, chain in enumerate(data["chains"]):
            chain_ids.append(chain.get("chain_id", ""))
            for residue in chain["residues"]:
                residues.append((residue["name"], int(residue["resSeq"]), c))
                atoms += [(a["index"], a["name"], a["element"], len(residues) - 1) for a in residue["atoms"]]
        atoms.sort()
        res = lambda k: [residues[a[3]][k] for a in atoms]
        return cls({
            "atom_names": [a[1] for a in atoms], "elements": [a[2] for a in atoms], "residue_names": res(0),
            "residue_numbers": res(1), "residue_index": [a[3] for a in atoms],
            "chain_ids": [chain_ids[c] for c in res(2)], "atom_serials": None,
            "residues": {"names": [r[0] for r in residues], "numbers": [r[1] for r in residues],
                         "insertion_codes": [""] * len(residues), "chain_index": [r[2] for r in residues]},
            "chain_id_list": chain_ids, "bonds": data.get("bonds", []), "box_nm": None})


def _sorted_indices(indices, n, what):
    """Indices as an int64 array, checked: strictly increasing, within 0..n-1 (a boolean mask of length n is taken)."""
    indices = np.asarray(indices)
    if indices.dtype == bool:
        if indices.shape != (n,):
            raise ValueError(f"{what}: a boolean mask must have {n} entries, got shape {indices.shape}")
        return np.flatnonzero(indices)
    if indices.ndim != 1 or (indices.size and not np.issubdtype(indices.dtype, np.integer)):
        raise TypeError(f"{what}: expected a 1-d sequence of atom indices (int) or a boolean mask")
    indices = indices.astype(np.int64)
    if indices.size and (indices[0] < 0 or indices[-1] >= n or (np.diff(indices) <= 0).any()):
        raise ValueError(f"{what}: indices must be sorted, unique and within 0..{n - 1}")
    return indices


def _require(package, what):
    """Import `package`, or an ImportError naming it and what needs it."""
    import importlib
    try:
        return importlib.import_module(package)
    except ImportError as err:
        raise ImportError(f"{what} needs the '{package}' package, which cannot be imported ({err}); install it "
                          f"(pip install {package}, conda install -c conda-forge {package})") from err


def _parameters(function):
    import inspect
    return inspect.signature(function).parameters


def _mdtraj_element(md, symbol):
    if symbol in _NO_ELEMENT:
        return md.element.virtual
    try:
        return md.element.get_by_symbol(symbol)
    except KeyError:
        return md.element.virtual


def _openmm_element(app, symbol):
    if symbol in _NO_ELEMENT:
        return None
    try:
        return app.Element.getBySymbol(symbol)
    except KeyError:
        return None


def _topology(self):
    return Topology(self._topology())


Simulation.topology = property(_topology, doc="The structure's atoms, residues, chains and bonds (an mdsim.Topology)")
