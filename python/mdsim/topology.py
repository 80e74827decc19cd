"""mdsim.Topology: the structure's atoms, residues and chains in the System's atom order."""
from ._mdsim import Simulation


class Topology:
    """Per-atom topology in the System's atom order: atom_names, elements, residue_names, chain_ids (lists),
    residue_numbers and residue_index (numpy int64 arrays)."""

    def __init__(self, fields):
        self.atom_names = fields["atom_names"]
        self.elements = fields["elements"]
        self.residue_names = fields["residue_names"]
        self.residue_numbers = fields["residue_numbers"]
        self.residue_index = fields["residue_index"]
        self.chain_ids = fields["chain_ids"]

    @property
    def n_atoms(self):
        return len(self.atom_names)

    def __repr__(self):
        return f"<mdsim.Topology: {self.n_atoms} atoms, {len(set(self.residue_index.tolist()))} residues>"


def _topology(self):
    return Topology(self._topology())


Simulation.topology = property(_topology, doc="The structure's atoms, residues and chains (a Topology)")
