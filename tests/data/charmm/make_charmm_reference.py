#!/usr/bin/python3
"""OpenMM 7.7 references for io/charmm_psf (tests/io/test_charmm_psf.cpp), beside the shared ala3 case.

Inputs come from OpenMM's test folder (github:openmm/openmm, wrappers/python/tests/systems/, MIT licence; the CHARMM
force-field files in it are CHARMM's, distributed for free use). The large CGenFF and CHARMM22 files are trimmed to
the atom types each system uses (every MASS, bond, angle, dihedral, improper and nonbonded line whose types are all
used or wildcards), so the folder stays small; the trimmed files are what both OpenMM and mdsim read here.

  chlb_cgenff      chlorobenzene, CGenFF: a colinear lone pair on the chlorine (!NUMLP), EXT crd, XPLOR types
  ala_ala_ala      Ala3 in vacuum, XPLOR-format PSF (.xpsf) with CHARMM22 (types from the .rtf's MASS lines, wildcard
                   dihedrals and impropers, CMAP), standard-format crd
  water_methanol   SPC/E water and methanol, mixed-case type names, positions made here (standard crd written here)
  chl1             cholesterol with CHARMM36 lipid parameters, CGenFF and the lipid cholesterol stream file (as OpenMM's
                   TestCharmmFiles loads it)

Each case: NoCutoff, constraints None, rigidWater False; one force group per force; energies by force class and the
total, per-atom forces (kJ/mol/nm) and positions (nm) in <case>.json.

Run: /usr/bin/python3 make_charmm_reference.py <openmm checkout>/wrappers/python/tests/systems
"""
import json
import os
import re
import sys

import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/data: openmm_energies
from openmm_energies import energies_by_force, term_count  # noqa: E402


def used_types(psf_path):
    lines = open(psf_path).read().splitlines()
    start = next(i for i, l in enumerate(lines) if "!NATOM" in l)
    n = int(lines[start].split()[0])
    return {l.split()[5].upper() for l in lines[start + 1:start + 1 + n]}


SECTION_WIDTH = {"BOND": 2, "ANGL": 3, "THET": 3, "DIHE": 4, "PHI": 4, "IMPR": 4, "IMPH": 4, "NONB": 1, "NBON": 1,
                 "NBFI": 2}


def trim_parameters(src, dst, types):
    open(dst, "w").write("\n".join(trim_parameter_lines(open(src).read().splitlines(), types)) + "\n")


def trim_stream(src, dst, types):
    """Each `read rtf` block cut to its used MASS lines, each `read para` block trimmed as a parameter file."""
    lines, out, i = open(src).read().splitlines(), [], 0
    while i < len(lines):
        words = lines[i].split("!")[0].split()
        i += 1
        if len(words) < 2 or words[0].lower() != "read":
            continue
        block = []
        while i < len(lines) and not lines[i].strip().lower().startswith("end"):
            block.append(lines[i])
            i += 1
        i += 1
        if words[1].lower() == "rtf":
            out += ["read rtf card"] + [l for l in block if l.upper().startswith("MASS") and l.split()[2].upper() in types]
        elif words[1].lower().startswith("para"):
            out += ["read para card flex"] + trim_parameter_lines(block, types)
        out.append("END")
    open(dst, "w").write("\n".join(out) + "\n")


def trim_parameter_lines(lines, types):
    """Keeps headers and the data lines whose types are all used (or X)."""
    out, width, in_cmap, keep_block = [], None, False, False
    for raw in lines:
        code = raw.split("!")[0].strip()
        word = code.split()[0].upper() if code else ""
        header = next((k for k in SECTION_WIDTH if word.startswith(k)), None)
        if not code or code.startswith("*"):
            if code or not raw.strip():  # title and blank lines; comment-only lines are left out
                out.append(raw)
            continue
        if header or word in ("ATOMS", "END", "HBOND", "CMAP"):
            width = SECTION_WIDTH.get(header) if header else None
            in_cmap = word == "CMAP"
            out.append(raw)
            continue
        if in_cmap:  # a block: 8 types and the size, then its values
            if not re.match(r"^[-+0-9.]", code):
                keep_block = all(n.upper() in types for n in code.split()[:8])
            if keep_block:
                out.append(raw)
            continue
        if word == "MASS":
            if code.split()[2].upper() in types:
                out.append(raw)
            continue
        if width is None:
            if code.split()[0].upper() in ("CUTNB",) or code.endswith("-"):
                out.append(raw)
            continue
        if out and out[-1].split("!")[0].rstrip().endswith("-"):  # a header's continuation
            out.append(raw)
            continue
        names = [w.upper() for w in code.split()[:width]]
        if all(n in types or n == "X" for n in names):
            out.append(raw)
    return out


def trim_rtf(src, dst, types):
    keep = [l for l in open(src).read().splitlines()
            if l.startswith("*") or (l.upper().startswith("MASS") and l.split()[2].upper() in types)]
    open(dst, "w").write("\n".join(keep + ["", "END"]) + "\n")


def water_methanol_crd(path):
    atoms = [("SPCE", "H", (0.8165, 0.5773, 0.0)), ("SPCE", "O", (0.0, 0.0, 0.0)), ("SPCE", "H", (-0.8165, 0.5773, 0.0)),
             ("METH", "C", (5.0, 0.0, 0.2)), ("METH", "H", (5.4, 1.0, 0.3)), ("METH", "H", (5.3, -0.5, 1.1)),
             ("METH", "H", (5.3, -0.6, -0.6)), ("METH", "O", (3.6, 0.1, 0.0)), ("METH", "H", (3.3, -0.7, -0.4))]
    lines = ["* water and methanol (made by make_charmm_reference.py)", "*", "%5d" % len(atoms)]
    for k, (res, name, (x, y, z)) in enumerate(atoms):
        resid = 1 if res == "SPCE" else 2
        lines.append("%5d%5d %-4s %-4s%10.5f%10.5f%10.5f %-4s %-4s%10.5f" % (k + 1, resid, res, name, x, y, z, "S",
                                                                              str(resid), 0.0))
    open(path, "w").write("\n".join(lines) + "\n")


def reference(name, psf_file, crd_file, parameter_files):
    params = app.CharmmParameterSet(*[os.path.join(HERE, f) for f in parameter_files])
    psf = app.CharmmPsfFile(os.path.join(HERE, psf_file))
    crd = app.CharmmCrdFile(os.path.join(HERE, crd_file))
    system = psf.createSystem(params, nonbondedMethod=app.NoCutoff, constraints=None, rigidWater=False)
    for k in reversed(range(system.getNumForces())):
        if isinstance(system.getForce(k), mm.CMMotionRemover):
            system.removeForce(k)
    energies, state = energies_by_force(system, crd.positions, lambda f: f.__class__.__name__)
    nb = next(f for f in system.getForces() if isinstance(f, mm.NonbondedForce))
    out = {
        "name": name, "inputs": [psf_file, crd_file] + parameter_files, "openmm_version": mm.__version__,
        "platform": "Reference (double)", "settings": {"nonbonded_method": "NoCutoff", "constraints": "none",
                                                       "rigid_water": False},
        "energies_kj_per_mol": energies,
        "counts": {"atoms": system.getNumParticles(), "exceptions": nb.getNumExceptions(),
                   "virtual_sites": sum(system.isVirtualSite(i) for i in range(system.getNumParticles())),
                   "forces": {f.__class__.__name__: term_count(f) for f in system.getForces()}},
        "positions_nm": [list(v) for v in state.getPositions().value_in_unit(unit.nanometer)],
        "forces_kj_per_mol_nm": [list(v) for v in state.getForces().value_in_unit(unit.kilojoule_per_mole / unit.nanometer)],
    }
    json.dump(out, open(os.path.join(HERE, name + ".json"), "w"), indent=1)
    print(name, {k: round(v, 6) for k, v in energies.items()})


def main(systems):
    copy = lambda f, to=None: open(os.path.join(HERE, to or f), "w").write(open(os.path.join(systems, f)).read())
    for f in ["chlb_cgenff.psf", "chlb_cgenff.crd", "ala_ala_ala.xpsf", "ala_ala_ala.crd", "water_methanol.psf",
              "water_methanol.prm"]:
        copy(f, f.replace(".xpsf", "_xplor.psf"))
    chlb = used_types(os.path.join(systems, "chlb_cgenff.psf"))
    trim_rtf(os.path.join(systems, "top_all36_cgenff.rtf"), os.path.join(HERE, "cgenff_chlb.rtf"), chlb)
    trim_parameters(os.path.join(systems, "par_all36_cgenff.prm"), os.path.join(HERE, "cgenff_chlb.prm"), chlb)
    ala = used_types(os.path.join(systems, "ala_ala_ala.xpsf"))
    trim_rtf(os.path.join(systems, "charmm22.rtf"), os.path.join(HERE, "charmm22_ala.rtf"), ala)
    trim_parameters(os.path.join(systems, "charmm22.par"), os.path.join(HERE, "charmm22_ala.par"), ala)
    chl1 = used_types(os.path.join(systems, "chl1.psf"))
    copy("chl1.psf")
    copy("chl1.crd")
    trim_parameters(os.path.join(systems, "par_all36_lipid.prm"), os.path.join(HERE, "lipid_chl1.prm"), chl1)
    trim_parameters(os.path.join(systems, "par_all36_cgenff.prm"), os.path.join(HERE, "cgenff_chl1.prm"), chl1)
    trim_stream(os.path.join(systems, "toppar_all36_lipid_cholesterol.str"), os.path.join(HERE, "cholesterol_chl1.str"),
                chl1)
    water_methanol_crd(os.path.join(HERE, "water_methanol.crd"))
    reference("chlb_cgenff", "chlb_cgenff.psf", "chlb_cgenff.crd", ["cgenff_chlb.rtf", "cgenff_chlb.prm"])
    reference("ala_ala_ala", "ala_ala_ala_xplor.psf", "ala_ala_ala.crd", ["charmm22_ala.rtf", "charmm22_ala.par"])
    reference("water_methanol", "water_methanol.psf", "water_methanol.crd", ["water_methanol.prm"])
    reference("chl1", "chl1.psf", "chl1.crd", ["lipid_chl1.prm", "cgenff_chl1.prm", "cholesterol_chl1.str"])


if __name__ == "__main__":
    main(sys.argv[1])
