"""PDBx/mmCIF versions of shared systems for tests/io/test_structure_reader.cpp, written by OpenMM 7.7's PDBxFile.

Run with the Debian OpenMM (python3-simtk) from the repository root:
    /usr/bin/python3 tests/data/make_structure_cif.py
It reads tests/data/shared/systems/{ala2_water,villin_water}.pdb with OpenMM's PDBFile and writes
tests/data/structure_<name>.cif.gz with PDBxFile.writeFile(keepIds=True), so residue numbers, insertion codes
and chain IDs stay those of the PDB file. A blank chain ID is not a valid mmCIF value: such chains (villin_water
has one) are named A, B, ... by their index before writing, and the test expects those names.
"""
import gzip
import io
import os

from openmm.app import PDBFile, PDBxFile

HERE = os.path.dirname(os.path.abspath(__file__))
SYSTEMS = os.path.join(HERE, "shared", "systems")

for name in ("ala2_water", "villin_water"):
    pdb = PDBFile(os.path.join(SYSTEMS, name + ".pdb"))
    for index, chain in enumerate(pdb.topology.chains()):
        if not chain.id.strip():
            chain.id = chr(ord("A") + index % 26)
    text = io.StringIO()
    PDBxFile.writeFile(pdb.topology, pdb.positions, text, keepIds=True)
    # The header line carries today's date; drop it so the file is reproducible.
    lines = [line for line in text.getvalue().splitlines(True) if not line.startswith("# Created with OpenMM")]
    out = os.path.join(HERE, "structure_%s.cif.gz" % name)
    with open(out, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        gz.write("".join(lines).encode())
    print(out, pdb.topology.getNumAtoms(), "atoms")
