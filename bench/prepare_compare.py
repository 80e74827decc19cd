#!/usr/bin/python3
"""`mdsim prepare` against OpenMM 7.7's Modeller on heavy-atom-only structures (issue 17's comparison).

For each input: hydrogens (and waters and ions) are stripped, leaving what a PDB entry holds; Modeller
(addHydrogens at pH 7 with amber14, then addSolvent with 1.0 nm padding, 0.15 M NaCl) and `mdsim prepare`
(same settings) each prepare it. Printed per input: hydrogens added, per-residue hydrogen counts that differ,
protonation states (from the hydrogens present) that differ, box edge, waters, ions.

usage: /usr/bin/python3 bench/prepare_compare.py MDSIM_BINARY OUT_DIR INPUT.pdb [INPUT.pdb ...]
"""
import json
import os
import subprocess
import sys
import time

from openmm import app, unit

WATER_IONS = {"HOH", "WAT", "NA", "CL", "K", "Na+", "Cl-"}


def strip(src, dst):
    """Heavy atoms of the non-water residues, as a PDB entry has them (CRYST1 kept)."""
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            if line.startswith(("ATOM", "HETATM")):
                element = line[76:78].strip() or line[12:16].strip()[0]
                if element in ("H", "D") or line[17:20].strip() in WATER_IONS:
                    continue
            if line.startswith("CONECT"):
                continue
            out.write(line)


def variant(residue_name, hydrogens):
    names = set(hydrogens)
    if residue_name == "HIS":
        return {(True, True): "HIP", (True, False): "HID", (False, True): "HIE", (False, False): "HIN"}[
            ("HD1" in names, "HE2" in names)]
    if residue_name == "CYS":
        return "CYS" if "HG" in names else "CYX"
    if residue_name == "ASP":
        return "ASH" if "HD2" in names else "ASP"
    if residue_name == "GLU":
        return "GLH" if "HE2" in names else "GLU"
    if residue_name == "LYS":
        return "LYS" if "HZ3" in names else "LYN"
    return residue_name


def residue_table(topology):
    """(chain index, residue number, name) -> sorted hydrogen names, for the solute's residues."""
    table = {}
    for ci, chain in enumerate(topology.chains()):
        for res in chain.residues():
            if res.name in WATER_IONS:
                continue
            table[(ci, res.id, res.name)] = sorted(a.name for a in res.atoms() if a.element is not None and a.element.symbol == "H")
    return table


def count(topology, names):
    return sum(1 for r in topology.residues() if r.name in names)


def main():
    mdsim, out_dir, inputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    os.makedirs(out_dir, exist_ok=True)
    ff = app.ForceField("amber14-all.xml", "amber14/tip3p.xml")
    results = []
    for path in inputs:
        name = os.path.splitext(os.path.basename(path))[0]
        raw = os.path.join(out_dir, name + "_heavy.pdb")
        strip(path, raw)
        pdb = app.PDBFile(raw)
        m = app.Modeller(pdb.topology, pdb.positions)
        t0 = time.time()
        m.addHydrogens(ff, pH=7.0)
        h_time = time.time() - t0
        omm_h = residue_table(m.topology)
        t0 = time.time()
        m.addSolvent(ff, padding=1.0 * unit.nanometer, ionicStrength=0.15 * unit.molar)
        s_time = time.time() - t0
        omm_box = m.topology.getPeriodicBoxVectors()[0][0].value_in_unit(unit.nanometer)
        omm = {"waters": count(m.topology, {"HOH"}), "na": count(m.topology, {"NA"}), "cl": count(m.topology, {"CL"}),
               "box_nm": omm_box, "atoms": m.topology.getNumAtoms(), "seconds_h": h_time, "seconds_solvent": s_time}

        prepared = os.path.join(out_dir, name + "_prepared.pdb")
        t0 = time.time()
        run = subprocess.run([mdsim, "prepare", raw, "-o", prepared, "--config", os.path.join(out_dir, name + "_run.yaml")],
                             capture_output=True, text=True)
        md_time = time.time() - t0
        if run.returncode != 0:
            results.append({"input": name, "error": run.stderr.strip()})
            print(f"{name}: mdsim prepare failed: {run.stderr.strip()}")
            continue
        ours = app.PDBFile(prepared)
        our_h = residue_table(ours.topology)
        ours_box = ours.topology.getPeriodicBoxVectors()[0][0].value_in_unit(unit.nanometer)
        md = {"waters": count(ours.topology, {"HOH"}), "na": count(ours.topology, {"NA"}), "cl": count(ours.topology, {"CL"}),
              "box_nm": ours_box, "atoms": ours.topology.getNumAtoms(), "seconds": md_time}
        h_diff, v_diff, checked = [], [], 0
        keys_omm, keys_our = list(omm_h), list(our_h)
        if len(keys_omm) != len(keys_our):
            h_diff.append(f"residue count {len(keys_omm)} vs {len(keys_our)}")
        for ko, km in zip(keys_omm, keys_our):
            checked += 1
            if len(omm_h[ko]) != len(our_h[km]):
                h_diff.append(f"{ko[2]} {ko[1]}: {len(omm_h[ko])} vs {len(our_h[km])}")
            vo, vm = variant(ko[2], omm_h[ko]), variant(km[2], our_h[km])
            if vo != vm:
                v_diff.append(f"{ko[2]} {ko[1]}: Modeller {vo}, mdsim {vm}")
        variants = {}
        for k, hs in our_h.items():
            v = variant(k[2], hs)
            if k[2] in ("HIS", "CYS", "ASP", "GLU", "LYS"):
                variants[v] = variants.get(v, 0) + 1
        r = {"input": name, "residues": checked,
             "hydrogens_openmm": sum(len(v) for v in omm_h.values()), "hydrogens_mdsim": sum(len(v) for v in our_h.values()),
             "hydrogen_count_differences": h_diff, "variant_differences": v_diff, "variants_mdsim": variants,
             "openmm": omm, "mdsim": md, "summary": run.stdout}
        results.append(r)
        print(f"{name}: {checked} residues; H Modeller {r['hydrogens_openmm']} mdsim {r['hydrogens_mdsim']}; "
              f"per-residue H differences {len(h_diff)}; variant differences {len(v_diff)} {v_diff}; "
              f"box {omm['box_nm']:.4f} / {md['box_nm']:.4f} nm; waters {omm['waters']} / {md['waters']}; "
              f"Na+ {omm['na']} / {md['na']}; Cl- {omm['cl']} / {md['cl']}; "
              f"time Modeller {h_time + s_time:.1f} s, mdsim {md_time:.1f} s")
    with open(os.path.join(out_dir, "prepare_compare.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
