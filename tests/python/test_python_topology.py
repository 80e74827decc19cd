"""sim.topology, Topology.from_file / to_mdtraj / to_openmm and mdsim.load_trajectory on the CPU platform (CTest
python_topology):
  * the topology's arrays (atoms, residues, chains, bonds) against the PDB file itself, and its bonds against
    OpenMM's PDBFile (the same residue templates, disulfides and CONECT) for ala2 in water;
  * Topology.to_openmm() / to_mdtraj() against openmm.app.PDBFile and mdtraj.load_pdb of the same file (atom,
    residue, chain and bond sets);
  * bonds from every input path: PDB + force field, AMBER prmtop, GROMACS top, CHARMM psf, serialized System + PDB,
    serialized System + State; against OpenMM's AmberPrmtopFile / GromacsTopFile / CharmmPsfFile topologies;
  * load_trajectory() of a run's trajectory (velocities, forces, box) against h5py and mdtraj.load of the same file,
    with atoms= and frames=, and a trajectory of a selection.
The checks that need openmm or mdtraj print a 'skipped' line when the package is not importable; the rest always run.
Usage: test_python_topology.py TEST_DATA_DIR (PYTHONPATH must hold build/python)."""
import os
import pathlib
import sys
import tempfile
import warnings

import h5py
import numpy as np

import mdsim
from checks import check, failures  # tests/python/checks.py
from mdsim.trajectory import Trajectory, load_trajectory

warnings.filterwarnings("ignore", category=DeprecationWarning)
DATA = os.path.abspath(sys.argv[1])
SYSTEMS = os.path.join(DATA, "systems")
INPUTS = os.path.join(DATA, "topologies", "inputs")


def optional(package):
    """The module, or None with a printed 'skipped' line (the checks needing it are skipped, the rest run)."""
    try:
        return __import__(package)
    except ImportError as err:
        print(f"skip  the {package} checks: {package} is not importable ({err})")
        return None


openmm = optional("openmm")
mdtraj = optional("mdtraj")
if openmm is not None:
    import openmm.app as app


def pdb_records(path):
    """Atoms (serial, name, element, residue index), residues (resSeq, iCode, name) and chain ids of a PDB file's
    ATOM/HETATM records, grouped as OpenMM's PDBFile groups them: a new chain where the chain ID changes or after TER,
    a new residue where the chain or (resSeq, iCode, name) changes."""
    atoms, residues, chains = [], [], []
    new_chain, last = True, None
    for line in open(path):
        if line.startswith("TER"):
            new_chain = True
        elif line.startswith(("ATOM", "HETATM")):
            chain, key = line[21], (line[22:26].strip(), line[26].strip(), line[17:20].strip())
            if new_chain or chain != chains[-1]:
                chains.append(chain)
                new_chain, last = False, None
            if key != last:
                residues.append(key)
                last = key
            atoms.append((int(line[6:11]), line[12:16].strip(), line[76:78].strip(), len(residues) - 1))
    return atoms, residues, chains


def bond_set(pairs):
    """Bonds as a set of (i, j) with i < j."""
    return {(min(int(i), int(j)), max(int(i), int(j))) for i, j in pairs}


def openmm_bonds(topology):
    return bond_set((a.index, b.index) for a, b in topology.bonds())


def mdtraj_bonds(topology):
    return bond_set((a.index, b.index) for a, b in topology.bonds)


def check_structure(top, what):
    """What every topology must satisfy: consistent lengths, index ranges, unique bonds, one bond per hydrogen."""
    n = top.n_atoms
    lengths = {len(top.atom_names), len(top.elements), len(top.residue_names), len(top.residue_numbers),
               len(top.residue_index), len(top.chain_ids), len(top.atoms), len(top.atoms.names),
               len(top.atoms.elements), len(top.atoms.residue_index)}
    check(lengths == {n} and top.atoms.names.dtype.kind == "U" and top.residue_index.dtype == np.int64,
          f"{what}: per-atom arrays of {n}, names as str arrays, indices int64")
    check(len(top.residues.names) == len(top.residues.numbers) == len(top.residues.insertion_codes) ==
          len(top.residues.chain_index) == top.n_residues and len(top.chains.ids) == top.n_chains,
          f"{what}: {top.n_residues} residues, {top.n_chains} chains")
    check(top.n_residues == 0 or (np.diff(top.residue_index) >= 0).all() and top.residue_index[-1] == top.n_residues - 1
          and (top.residues.chain_index >= 0).all() and top.residues.chain_index.max() == top.n_chains - 1,
          f"{what}: residue and chain indices cover their ranges in order")
    same = all(top.residue_names[i] == top.residues.names[r] and top.residue_numbers[i] == top.residues.numbers[r] and
               top.chain_ids[i] == top.chains.ids[top.residues.chain_index[r]]
               for i, r in enumerate(top.residue_index.tolist()))
    check(same, f"{what}: per-atom residue names, numbers and chain ids agree with the per-residue arrays")
    b = top.bonds
    check(b.dtype == np.int64 and b.shape == (top.n_bonds, 2) and top.n_bonds > 0 and (b >= 0).all() and (b < n).all()
          and (b[:, 0] != b[:, 1]).all() and len(bond_set(b)) == top.n_bonds,
          f"{what}: {top.n_bonds} bonds, (n, 2) int64, in range, unique")
    hydrogen = top.atoms.elements == "H"
    heavy_bonds = b[hydrogen[b].sum(axis=1) == 1]  # AMBER's waters add an H-H bond
    degree = np.bincount(heavy_bonds.ravel(), minlength=n)
    check(hydrogen.any() and (degree[hydrogen] == 1).all(),
          f"{what}: each of {hydrogen.sum()} hydrogens is bonded to one heavy atom")


def test_pdb(work):
    """ala2 in water from a config dict: the topology against the PDB and OpenMM's / MDTraj's readings of it."""
    pdb = os.path.join(SYSTEMS, "ala2_water.pdb")
    sim = mdsim.Simulation.from_config(config(os.path.join(work, "pdb_out"), "ala2_water.pdb", "pme"), quiet=True)
    top = sim.topology
    check_structure(top, "ala2_water.pdb + amber14")
    atoms, residues, chains = pdb_records(pdb)
    check(top.n_atoms == sim.n_atoms == len(atoms) and top.n_residues == len(residues) and top.n_chains == len(chains),
          f"counts as in the PDB: {top.n_atoms} atoms, {top.n_residues} residues, {top.n_chains} chains")
    check(top.atoms.names.tolist() == [a[1] for a in atoms] and top.atoms.elements.tolist() == [a[2] for a in atoms]
          and top.atoms.serials.tolist() == [a[0] for a in atoms] and top.residue_index.tolist() == [a[3] for a in atoms],
          "atom names, elements, serials and residues as in the PDB")
    check(top.residues.names.tolist() == [r[2] for r in residues] and
          top.residues.numbers.tolist() == [int(r[0]) for r in residues] and
          set(top.residues.insertion_codes.tolist()) == {""} and top.chains.ids.tolist() == chains,
          f"residue names, numbers, insertion codes and chain ids as in the PDB ({top.residues.names[:3].tolist()})")
    check(top.atom_names[:3] == ["H1", "CH3", "H2"] and top.residue_names[0] == "ACE" and top.chain_ids[0] == "A",
          "the per-atom lists of earlier versions")
    check(top.box_nm is not None and np.allclose(np.diag(top.box_nm), [3.2853, 3.2862, 3.1855]), "box from CRYST1 (nm)")
    water = top.residues.names == "HOH"
    check(top.n_bonds == 2 * water.sum() + 21, f"{top.n_bonds} bonds: 21 in ala2, 2 per water ({water.sum()})")
    from_file = mdsim.Topology.from_file(pdb)
    check(from_file.atom_names == top.atom_names and np.array_equal(from_file.bonds, top.bonds) and
          from_file.chains.ids.tolist() == top.chains.ids.tolist(), "Topology.from_file: the simulation's topology")
    check(repr(top) == f"<mdsim.Topology: {top.n_atoms} atoms, {top.n_residues} residues, {top.n_chains} chains, "
          f"{top.n_bonds} bonds>", repr(top))
    check_conversions(top, pdb)
    return sim


def config(out, structure, method, trajectory=None):
    """A config dict (the YAML's keys) on the CPU platform writing only a trajectory."""
    trajectory = trajectory or {"interval": 10, "velocities": True, "forces": True}
    return {"system": {"pdb": pathlib.Path(SYSTEMS) / structure, "nonbonded_method": method, "constraints": "hbonds"},
            "platform": "cpu", "integrator": {"timestep": "2 fs", "temperature": "300 K", "seed": 5},
            "run": {"steps": 30},
            "output": {"directory": out, "trajectory": trajectory, "state": None, "checkpoint": None,
                       "final_pdb": None, "progress": False}}


def check_conversions(top, pdb):
    """to_openmm() and to_mdtraj() against OpenMM's PDBFile and mdtraj.load_pdb of the same file (without the package:
    the ImportError names it)."""
    for package, convert in (("openmm", top.to_openmm), ("mdtraj", top.to_mdtraj)):
        if globals()[package] is None:
            try:
                convert()
                check(False, f"{convert.__name__}() without {package}: ImportError")
            except ImportError as err:
                check(f"'{package}'" in str(err), f"{convert.__name__}() without {package}: ImportError ({err})")
    if openmm is not None:
        reference = app.PDBFile(pdb).topology
        app.ForceField("amber14-all.xml", "amber14/tip3p.xml").createSystem(reference)  # its templates match
        mine = top.to_openmm()
        check(isinstance(mine, app.Topology) and mine.getNumAtoms() == reference.getNumAtoms() and
              mine.getNumResidues() == reference.getNumResidues() and mine.getNumChains() == reference.getNumChains(),
              f"to_openmm: {mine.getNumAtoms()} atoms, {mine.getNumResidues()} residues, {mine.getNumChains()} chains "
              "as PDBFile's")
        check([r.name for r in mine.residues()] == [r.name for r in reference.residues()] and
              [r.id for r in mine.residues()] == [r.id for r in reference.residues()] and
              [c.id for c in mine.chains()] == [c.id for c in reference.chains()] and
              [(a.name, a.element, a.id) for a in mine.atoms()] == [(a.name, a.element, a.id) for a in reference.atoms()],
              "to_openmm: atom names, elements and ids, residue names and ids, chain ids as PDBFile's")
        check(openmm_bonds(mine) == openmm_bonds(reference) == bond_set(top.bonds),
              f"bonds: mdsim's {top.n_bonds} = to_openmm()'s = PDBFile's {reference.getNumBonds()} (as sets)")
        box = mine.getPeriodicBoxVectors().value_in_unit(openmm.unit.nanometer)
        check(np.allclose(box, reference.getPeriodicBoxVectors().value_in_unit(openmm.unit.nanometer), atol=1e-9),
              "to_openmm: the box vectors as PDBFile's")
    if mdtraj is not None:
        reference = mdtraj.load_pdb(pdb).topology
        mine = top.to_mdtraj()
        check(isinstance(mine, mdtraj.Topology) and mine.n_atoms == reference.n_atoms and
              mine.n_residues == reference.n_residues and mine.n_chains == reference.n_chains,
              f"to_mdtraj: {mine.n_atoms} atoms, {mine.n_residues} residues, {mine.n_chains} chains as mdtraj.load_pdb")
        check([r.name for r in mine.residues] == [r.name for r in reference.residues] and
              [r.resSeq for r in mine.residues] == [r.resSeq for r in reference.residues] and
              [(a.name, a.element.symbol) for a in mine.atoms] == [(a.name, a.element.symbol) for a in reference.atoms],
              "to_mdtraj: residue names and resSeq, atom names and elements as mdtraj.load_pdb's")
        check(mdtraj_bonds(mine) == mdtraj_bonds(reference) == bond_set(top.bonds),
              f"to_mdtraj: bonds as mdtraj.load_pdb's (as sets: {len(mdtraj_bonds(reference))}; it lists "
              f"{reference.n_bonds} with repeats)")
        check(len(mine.select("protein and name CA")) == 1 and len(mine.select("water")) == 3 * (top.residues.names == "HOH").sum(),
              "to_mdtraj: MDTraj's selections work (protein, water)")


def test_virtual_sites():
    """TIP4P-Ew extra particles (element "" in mdsim) become OpenMM's element None and MDTraj's virtual site."""
    pdb = os.path.join(INPUTS, "ffxml_amber14_tip4pew_ala2.pdb")
    top = mdsim.Topology.from_file(pdb)
    extra = np.flatnonzero(top.atoms.elements == "")
    check(len(extra) == 749 and set(top.residue_names[i] for i in extra) == {"HOH"},
          f"tip4pew: {len(extra)} extra particles (water's {set(top.atoms.names[extra].tolist())}) with element ''")
    if openmm is not None:
        mine, reference = top.to_openmm(), app.PDBFile(pdb).topology
        check([a.element for a in mine.atoms()] == [a.element for a in reference.atoms()] and
              openmm_bonds(mine) == openmm_bonds(reference),
              "to_openmm: element None for the extra particles, elements and bonds as PDBFile's")
    if mdtraj is not None:
        mine = top.to_mdtraj()
        check(all(mine.atom(i).element == mdtraj.element.virtual for i in extra), "to_mdtraj: extra particles are virtual sites")


def test_topology_files():
    """Bonds from the topology files: as OpenMM's AmberPrmtopFile / GromacsTopFile / CharmmPsfFile topologies."""
    cases = [("amber prmtop", "alanine-dipeptide-explicit.prmtop", {"coordinates": "alanine-dipeptide-explicit.inpcrd"},
              lambda p: app.AmberPrmtopFile(p).topology),
             ("gromacs top", "apgr.nonbfix.pairs.comb2.top", {"coordinates": "apgr.gro", "nonbonded_method": "no_cutoff"},
              lambda p: app.GromacsTopFile(p).topology),
             ("charmm psf", "ala3_solv.psf", {"coordinates": "ala3_solv.crd", "nonbonded_method": "no_cutoff",
                                              "parameters": ["par_all36_prot.prm", "toppar_water_ions.str"]},
              lambda p: app.CharmmPsfFile(p).topology)]
    for what, name, options, reference in cases:
        options = {k: ([os.path.join(INPUTS, x) for x in v] if isinstance(v, list) else
                       os.path.join(INPUTS, v) if k in ("coordinates",) else v) for k, v in options.items()}
        sim = mdsim.Simulation.from_structure(os.path.join(INPUTS, name), platform="cpu", quiet=True, **options)
        top = sim.topology
        check_structure(top, what)
        check(top.n_atoms == sim.n_atoms, f"{what}: {top.n_atoms} atoms, as the System")
        if openmm is not None:
            expected = reference(os.path.join(INPUTS, name))
            # OpenMM renames waters HOH (WAT, TIP3, SOL); mdsim keeps the file's names.
            names = ["HOH" if r in ("WAT", "TIP3", "SOL") else r for r in top.residues.names.tolist()]
            check(bond_set(top.bonds) == openmm_bonds(expected) and top.n_residues == expected.getNumResidues() and
                  names == [r.name for r in expected.residues()] and top.n_chains == expected.getNumChains(),
                  f"{what}: {top.n_bonds} bonds, {top.n_residues} residues and {top.n_chains} chains as OpenMM's "
                  f"topology ({expected.getNumBonds()} bonds)")


def test_system_xml():
    """A serialized System with a PDB (names) and with a State (a topology made from the System): the System's bonds."""
    xml = os.path.join(DATA, "..", "system_xml_ala2_vacuum.system.xml")
    pdb = os.path.join(SYSTEMS, "ala2_vacuum.pdb")
    expected = bond_set(mdsim.Topology.from_file(pdb).bonds)
    for what, coordinates in (("system xml + pdb", pdb), ("system xml + state", xml.replace(".system.", ".state."))):
        top = mdsim.Simulation.from_structure(xml, coordinates=coordinates, platform="cpu", quiet=True).topology
        check_structure(top, what)
        check(bond_set(top.bonds) == expected, f"{what}: {top.n_bonds} bonds, the PDB's ({len(expected)})")


def test_trajectory(sim, work):
    """A run's trajectory read by load_trajectory against h5py and mdtraj.load."""
    sim.run()
    path = os.path.join(work, "pdb_out", "trajectory.h5")
    t = load_trajectory(path)
    check(getattr(mdsim, "load_trajectory", None) is load_trajectory,
          "mdsim.load_trajectory is exported (python/mdsim/__init__.py: from .trajectory import load_trajectory)")
    with h5py.File(path, "r") as f:
        raw = {k: f[f"particles/all/{k}/value"][:] for k in ("position", "velocity", "force")}
        box = f["particles/all/box/edges/value"][:]
        steps, times = f["particles/all/position/step"][:], f["particles/all/position/time"][:]
    check(isinstance(t, Trajectory) and t.n_frames == 3 and t.n_atoms == sim.n_atoms and t.steps.tolist() == [10, 20, 30]
          and t.steps.dtype == np.int64 and np.allclose(t.time_ps, [0.02, 0.04, 0.06], rtol=0, atol=1e-12),
          f"3 frames of {t.n_atoms} atoms at steps {t.steps.tolist()}, {t.time_ps.tolist()} ps")
    check(np.array_equal(t.positions, raw["position"]) and np.array_equal(t.velocities, raw["velocity"]) and
          np.array_equal(t.forces, raw["force"]) and np.array_equal(t.box_nm, box) and
          np.array_equal(t.steps, steps) and np.array_equal(t.time_ps, times), "arrays exactly as h5py reads them")
    check(t.positions.shape == (3, sim.n_atoms, 3) and t.box_nm.shape == (3, 3, 3) and t.complete and
          t.selection == "all" and np.array_equal(t.atom_indices, np.arange(sim.n_atoms)) and t.seed == 5,
          f"shapes, complete, selection 'all', atom_indices, seed: {t!r}")
    top = sim.topology
    check(t.topology.atom_names == top.atom_names and t.topology.elements == top.elements and
          t.topology.residues.names.tolist() == top.residues.names.tolist() and
          bond_set(t.topology.bonds) == bond_set(top.bonds), "the file's topology: the simulation's atoms, residues and bonds")
    part = load_trajectory(path, atoms=np.arange(22), frames=slice(1, None))
    check(np.array_equal(part.positions, raw["position"][1:, :22]) and np.array_equal(part.forces, raw["force"][1:, :22])
          and part.steps.tolist() == [20, 30] and part.topology.n_atoms == 22 and part.topology.n_residues == 3 and
          part.topology.n_bonds == 21 and part.atom_indices.tolist() == list(range(22)),
          "atoms=range(22), frames=slice(1, None): the peptide in the last two frames, its topology and bonds")
    picked = load_trajectory(path, frames=[0, 2], atoms=top.atoms.elements == "O")
    check(np.array_equal(picked.positions, raw["position"][[0, 2]][:, top.atoms.elements == "O"]),
          "frames=[0, 2], atoms=a boolean mask")
    if mdtraj is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # MDTraj's HDF5 loader: "top= kwargs ignored"
            reference = mdtraj.load(path)
        mine = t.to_mdtraj()
        check(np.array_equal(mine.xyz, reference.xyz) and np.allclose(mine.time, reference.time) and
              np.allclose(mine.unitcell_vectors, reference.unitcell_vectors, atol=1e-6) and
              mdtraj_bonds(mine.topology) == mdtraj_bonds(reference.topology) and
              [a.name for a in mine.topology.atoms] == [a.name for a in reference.topology.atoms],
              "Trajectory.to_mdtraj(): xyz, time, unit cell, atoms and bonds as mdtraj.load of the file")
        check(np.array_equal(t.to_mdtraj(top).xyz, reference.xyz), "to_mdtraj(sim.topology)")


def test_selection_trajectory(work):
    """A trajectory of a selection: its own topology, atom_indices unknown (the file records only the selection)."""
    out = os.path.join(work, "vacuum_out")
    sim = mdsim.Simulation.from_config(config(out, "ala2_vacuum.pdb", "no_cutoff", {"interval": 10, "atoms": "heavy"}),
                                       quiet=True)
    sim.run()
    t = load_trajectory(os.path.join(out, "trajectory.h5"))
    heavy = np.flatnonzero(sim.topology.atoms.elements != "H")
    check(t.n_atoms == len(heavy) and t.selection == "heavy" and t.atom_indices is None and t.box_nm is None and
          t.velocities is None and t.forces is None and t.topology.atom_names == [sim.topology.atom_names[i] for i in heavy]
          and t.topology.n_bonds == 9, f"selection 'heavy': {t.n_atoms} atoms, no box/velocities/forces, "
          f"{t.topology.n_bonds} heavy-atom bonds")
    bad = os.path.join(work, "not_a_trajectory.h5")
    with h5py.File(bad, "w") as f:
        f["x"] = [1]
    try:
        load_trajectory(bad)
        check(False, "a file without particles/all/position: InputError")
    except mdsim.InputError as err:
        check("not an mdsim trajectory" in str(err), f"a file without particles/all/position: InputError ({err})")


def test_open_trajectory(work):
    """A trajectory a reporter of this process still writes (between step() calls) reads as far as written."""
    path = os.path.join(work, "open.h5")
    sim = mdsim.Simulation.from_structure(os.path.join(SYSTEMS, "ala2_vacuum.pdb"), platform="cpu", quiet=True,
                                          nonbonded_method="no_cutoff")
    sim.reporters.append(mdsim.TrajectoryReporter(path, 10))
    sim.step(30)
    t = load_trajectory(path)
    written = t.steps.tolist()  # the writer's thread may still hold the latest frames
    check(written == [10, 20, 30][:len(written)] and len(t.positions) == len(written) and not t.complete and
          t.n_atoms == 22, f"while the reporter writes it: frames {written} of 10, 20, 30, complete {t.complete}")
    sim.step(10)
    sim.close()
    t = load_trajectory(path)
    check(t.steps.tolist() == [10, 20, 30, 40] and t.complete, f"after close(): frames {t.steps.tolist()}, complete")


def main():
    with tempfile.TemporaryDirectory(prefix="mdsim_topology_") as work:
        sim = test_pdb(work)
        test_virtual_sites()
        test_topology_files()
        test_system_xml()
        test_trajectory(sim, work)
        test_selection_trajectory(work)
        test_open_trajectory(work)
    if failures:
        print(f"{len(failures)} check(s) failed")
        sys.exit(1)
    print("all checks passed")


main()
