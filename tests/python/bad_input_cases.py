"""Bad-input cases for tests/python/bad_input_suite.py (the CLI's bad-input contract).

Each case is a dict:
  name      unique name (also the case's folder name)
  family    config | pdb | forcefield | checkpoint | output | cli | sysxml | prmtop | top | psf | prepare
  base      the valid setup it starts from (BASES below; default "vac"), copied into a fresh folder
  config    text replacing config.yaml;  sub: [(regex, replacement)] applied to config.yaml (must match);
  append    text appended to config.yaml
  edit      {file: [(regex, replacement)]};  lines: {file: {line number: new text, or None to delete}}
  write     {file: text or bytes};  remove: [file];  mkdir: [folder];  fifo: [path];  symlink: {path: target}
  artifacts {path: artifact name} (ARTIFACTS: outputs of a real run, made once per suite run)
  readonly  [folder] made read-only (the case is skipped when running as root)
  setup     callable(folder) for anything else;  needs: [Python modules] the setup uses (else the case is skipped)
  args      the command line (default ["run", "<CFG>"]); <CFG> is the case's config.yaml, <DIR> its folder
  code      expected exit code (default 2: input error; 1: runtime failure)
  err       regex stderr must match; <CFG> and <DIR> stand for the escaped paths. It must locate the problem:
            the file, line:column or line where the input has lines, and the key or atom concerned
  may_change [paths] the command may create or change (none for input errors)
  one_line  False when more than one stderr line is right
  no_cuda   True: the case is skipped where a CUDA device is present (what it refuses is valid there)

Adding a case: copy a neighbour, change what it breaks and the message it expects, run
  python3 tests/python/bad_input_suite.py build/mdsim tests/data/shared -k NAME -v
"""
import gzip
import os
import re

DATA_DIR = None  # set by the driver: tests/data/shared

# ------------------------------------------------------------------ bases

VAC_CONFIG = """\
system:
  pdb: ala2_vacuum.pdb
  forcefield: [amber14-all.xml]
  nonbonded_method: no_cutoff
platform: cpu
integrator:
  type: langevin_middle
  temperature: 300 K
  friction: 1/ps
  timestep: 2 fs
run:
  steps: 10
output:
  directory: out
  trajectory: {interval: 5}
  state: {interval: 5}
  checkpoint: {interval: 5}
  final_pdb: final.pdb
  progress: false
"""

WAT_CONFIG = """\
system:
  pdb: ala2_water.pdb
  forcefield: [amber14-all.xml, amber14/tip3p.xml]
  nonbonded_method: pme
  cutoff: 1.0 nm
platform: cpu
integrator:
  temperature: 300 K
  timestep: 2 fs
run:
  steps: 10
output:
  directory: out
  trajectory: {interval: 5}
  state: {interval: 5}
  checkpoint: {interval: 5}
  final_pdb: final.pdb
  progress: false
"""

# Three TIP3P waters (from ala2_water.pdb) with a local copy of tip3p.xml as ff.xml: force-field cases.
H2O_PDB = """\
HETATM    1  O   HOH B   1      28.414  24.909  23.615  1.00  0.00           O  
HETATM    2  H1  HOH B   1      28.334  23.995  23.344  1.00  0.00           H  
HETATM    3  H2  HOH B   1      28.001  25.406  22.909  1.00  0.00           H  
HETATM    4  O   HOH C   2      26.546  26.687  25.496  1.00  0.00           O  
HETATM    5  H1  HOH C   2      25.770  26.207  25.786  1.00  0.00           H  
HETATM    6  H2  HOH C   2      27.197  26.008  25.321  1.00  0.00           H  
HETATM    7  O   HOH D   3      20.563  26.999  26.373  1.00  0.00           O  
HETATM    8  H1  HOH D   3      19.731  26.744  26.773  1.00  0.00           H  
HETATM    9  H2  HOH D   3      21.171  27.070  27.109  1.00  0.00           H  
END
"""

# The same three waters as PDBx/mmCIF (line 15 is atom 1, line 23 atom 9), read through gemmi.
H2O_CIF = """\
data_water
loop_
_atom_site.group_PDB
_atom_site.id
_atom_site.type_symbol
_atom_site.label_atom_id
_atom_site.label_comp_id
_atom_site.label_asym_id
_atom_site.label_seq_id
_atom_site.Cartn_x
_atom_site.Cartn_y
_atom_site.Cartn_z
_atom_site.auth_seq_id
_atom_site.auth_asym_id
HETATM 1 O O  HOH B . 28.414 24.909 23.615 1 B
HETATM 2 H H1 HOH B . 28.334 23.995 23.344 1 B
HETATM 3 H H2 HOH B . 28.001 25.406 22.909 1 B
HETATM 4 O O  HOH C . 26.546 26.687 25.496 2 C
HETATM 5 H H1 HOH C . 25.770 26.207 25.786 2 C
HETATM 6 H H2 HOH C . 27.197 26.008 25.321 2 C
HETATM 7 O O  HOH D . 20.563 26.999 26.373 3 D
HETATM 8 H H1 HOH D . 19.731 26.744 26.773 3 D
HETATM 9 H H2 HOH D . 21.171 27.070 27.109 3 D
#
"""

H2O_CONFIG = """\
system:
  pdb: water.pdb
  forcefield: [ff.xml]
  nonbonded_method: no_cutoff
platform: cpu
run:
  steps: 10
output:
  directory: out
  trajectory: {interval: 5}
  state: {interval: 5}
  checkpoint: {interval: 5}
  final_pdb: final.pdb
  progress: false
"""

FF_XML = """\
<ForceField>
 <AtomTypes>
  <Type name="tip3p-O" class="OW" element="O" mass="15.99943"/>
  <Type name="tip3p-H" class="HW" element="H" mass="1.007947"/>
 </AtomTypes>
 <Residues>
  <Residue name="HOH">
   <Atom name="O" type="tip3p-O"/>
   <Atom name="H1" type="tip3p-H"/>
   <Atom name="H2" type="tip3p-H"/>
   <Bond atomName1="O" atomName2="H1"/>
   <Bond atomName1="O" atomName2="H2"/>
  </Residue>
 </Residues>
 <HarmonicBondForce>
  <Bond class1="OW" class2="HW" length="0.09572" k="462750.4"/>
 </HarmonicBondForce>
 <HarmonicAngleForce>
  <Angle class1="HW" class2="OW" class3="HW" angle="1.82421813418" k="836.8"/>
 </HarmonicAngleForce>
 <NonbondedForce coulomb14scale="0.833333" lj14scale="0.5">
  <Atom type="tip3p-O" charge="-0.834" sigma="0.31507524065751241" epsilon="0.635968"/>
  <Atom type="tip3p-H" charge="0.417" sigma="1" epsilon="0"/>
 </NonbondedForce>
</ForceField>
"""

# The vacuum config as a staged protocol (minimise, then 10 steps of restrained dynamics, then 10 free).
VAC_STAGED_CONFIG = VAC_CONFIG.replace("run:\n  steps: 10\n", "") + """\
stages:
  - name: minimize
    minimize: {max_iterations: 10}
  - name: restrained
    steps: 10
    restraints: {atoms: heavy, k: 1000 kJ/mol/nm^2}
  - name: free
    steps: 10
"""

# The vacuum config as a ladder of 300 and 320 K, an exchange round every 5 steps.
VAC_LADDER_CONFIG = VAC_CONFIG.replace("  temperature: 300 K\n", "") + (
    "replicas: {exchange: temperature, temperatures: [300 K, 320 K], exchange_interval: 10 fs}\n")

# ala2_vacuum as a serialized OpenMM System (NoCutoff, its NonbondedForce is force 2 at line 99 of the XML) with
# the PDB as coordinates.
SYSXML_CONFIG = """\
system:
  topology: ala2_vacuum.system.xml
  coordinates: ala2_vacuum.pdb
platform: cpu
run:
  steps: 10
output:
  directory: out
  trajectory: {interval: 5}
  state: {interval: 5}
  checkpoint: {interval: 5}
  final_pdb: final.pdb
  progress: false
"""

# An AMBER prmtop with its inpcrd (85 atoms, tleap; tests/data/shared/topologies/inputs) and a GROMACS top with its
# .gro (two benzenes with virtual sites, CHARMM36, self-contained: no #include), read without a cutoff.
TOPO_DIR = "<DATA>/topologies/inputs"
PRMTOP_CONFIG = SYSXML_CONFIG.replace("ala2_vacuum.system.xml", "peptide.prmtop").replace(
    "ala2_vacuum.pdb", "peptide.inpcrd\n  nonbonded_method: no_cutoff")
GMX_CONFIG = SYSXML_CONFIG.replace("ala2_vacuum.system.xml", "bnz.top").replace(
    "ala2_vacuum.pdb", "bnz.gro\n  nonbonded_method: no_cutoff")
# A CHARMM psf (SPC/E water and methanol, tests/data/charmm) with its crd and parameter file, without a cutoff.
CHARMM_DIR = "<DATA>/../charmm"
PSF_CONFIG = SYSXML_CONFIG.replace("ala2_vacuum.system.xml", "wm.psf").replace(
    "ala2_vacuum.pdb", "wm.crd\n  parameters: [wm.prm]\n  nonbonded_method: no_cutoff")

BASES = {
    "vac": {"files": {"config.yaml": VAC_CONFIG}, "copy": {"ala2_vacuum.pdb": "<DATA>/systems/ala2_vacuum.pdb"}},
    "wat": {"files": {"config.yaml": WAT_CONFIG}, "copy": {"ala2_water.pdb": "<DATA>/systems/ala2_water.pdb"}},
    "h2o": {"files": {"config.yaml": H2O_CONFIG, "water.pdb": H2O_PDB, "ff.xml": FF_XML}},
    "h2o_cif": {"files": {"config.yaml": H2O_CONFIG.replace("pdb: water.pdb", "structure: water.cif"),
                          "water.cif": H2O_CIF, "ff.xml": FF_XML}},
    # The vacuum setup after a finished 10-step run: out/ holds its checkpoint, trajectory, state log, final PDB.
    "vac_done": {"files": {"config.yaml": VAC_CONFIG}, "copy": {"ala2_vacuum.pdb": "<DATA>/systems/ala2_vacuum.pdb"},
                 "artifacts": {"out": "vac_out"}},
    # The staged vacuum setup after its run: out/ holds the checkpoint written in stage 'free'.
    "vac_staged": {"files": {"config.yaml": VAC_STAGED_CONFIG}, "copy": {"ala2_vacuum.pdb": "<DATA>/systems/ala2_vacuum.pdb"}},
    "vac_staged_done": {"files": {"config.yaml": VAC_STAGED_CONFIG},
                        "copy": {"ala2_vacuum.pdb": "<DATA>/systems/ala2_vacuum.pdb"},
                        "artifacts": {"out": "vac_staged_out"}},
    # The vacuum setup as a two-temperature ladder after its run: out/ holds the replicas' files and exchange.csv.
    "vac_ladder_done": {"files": {"config.yaml": VAC_LADDER_CONFIG},
                        "copy": {"ala2_vacuum.pdb": "<DATA>/systems/ala2_vacuum.pdb"},
                        "artifacts": {"out": "vac_ladder_out"}},
    "vac_ladder": {"files": {"config.yaml": VAC_LADDER_CONFIG}, "copy": {"ala2_vacuum.pdb": "<DATA>/systems/ala2_vacuum.pdb"}},
    # A serialized OpenMM System (tests/data/make_system_xml_reference.py) with the vacuum PDB as its coordinates.
    "sysxml": {"files": {"config.yaml": SYSXML_CONFIG},
               "copy": {"ala2_vacuum.pdb": "<DATA>/systems/ala2_vacuum.pdb",
                        "ala2_vacuum.system.xml": "<DATA>/../system_xml_ala2_vacuum.system.xml"}},
    "prmtop": {"files": {"config.yaml": PRMTOP_CONFIG},
               "copy": {"peptide.prmtop": TOPO_DIR + "/peptide_with_tip4p.prmtop",
                        "peptide.inpcrd": TOPO_DIR + "/peptide_with_tip4p.inpcrd"}},
    "psf": {"files": {"config.yaml": PSF_CONFIG},
            "copy": {"wm.psf": CHARMM_DIR + "/water_methanol.psf", "wm.crd": CHARMM_DIR + "/water_methanol.crd",
                     "wm.prm": CHARMM_DIR + "/water_methanol.prm"}},
    "gmx": {"files": {"config.yaml": GMX_CONFIG},
            "copy": {"bnz.top": TOPO_DIR + "/bnz.top", "bnz.gro": TOPO_DIR + "/bnz.gro"}},
    "empty": {},
}

ARTIFACTS = {
    "vac_ladder_out": {"base": "vac_ladder", "args": ["run", "<CFG>"], "result": "out"},
    "vac_out": {"base": "vac", "args": ["run", "<CFG>"], "result": "out"},
    "h2o_checkpoint": {"base": "h2o", "args": ["run", "<CFG>"], "result": "out/checkpoint.h5"},
    "vac_staged_out": {"base": "vac_staged", "args": ["run", "<CFG>"], "result": "out"},
}

# ala2_vacuum.pdb: line 2 is atom 1 (H1 ACE), line 8 atom 7 (N ALA), line 15 atom 14 (HB3 ALA).
PDB = "ala2_vacuum.pdb"
RESUME = ["run", "--resume", "<CFG>"]


def truncate(rel, fraction):
    def setup(root):
        path = os.path.join(root, rel)
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(int(size * fraction))
    return setup


def h5_edit(rel, dataset, how):
    """Rewrites one dataset of an HDF5 file with h5py (how: 'nan' or 'shape')."""
    def setup(root):
        import h5py
        import numpy as np
        with h5py.File(os.path.join(root, rel), "r+") as f:
            data = f[dataset][()]
            del f[dataset]
            if how == "nan":
                data = np.array(data, dtype=float)
                data.flat[0] = np.nan
                f[dataset] = data
            else:
                f[dataset] = data[:-1]
    return setup


def h5_attr(rel, name, value):
    def setup(root):
        import h5py
        with h5py.File(os.path.join(root, rel), "r+") as f:
            if value is None:
                del f.attrs[name]
            else:
                f.attrs[name] = value
    return setup


def _chop(root):  # drop the last byte: half of a two-byte UTF-8 character
    path = os.path.join(root, "config.yaml")
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[:-1])

def _latin1(root):
    path = os.path.join(root, "config.yaml")
    with open(path, "rb") as f:
        text = f.read().decode()
    with open(path, "wb") as f:
        f.write(text.encode("latin-1"))

def _cut_file_at(root, rel, line_number, column):
    """Cuts the file after `column` characters of line `line_number` (a write that stopped there)."""
    path = os.path.join(root, rel)
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    kept = b"\n".join(lines[:line_number - 1]) + b"\n" + lines[line_number - 1][:column]
    with open(path, "wb") as f:
        f.write(kept)

def _truncate_line(root, number, length):
    path = os.path.join(root, PDB)
    with open(path) as f:
        lines = f.read().split("\n")
    lines[number - 1] = lines[number - 1][:length]
    with open(path, "w") as f:
        f.write("\n".join(lines))

def _set_columns(line_number, begin, text):
    def setup(root):
        path = os.path.join(root, PDB)
        with open(path) as f:
            lines = f.read().split("\n")
        line = lines[line_number - 1]
        lines[line_number - 1] = line[:begin - 1] + text + line[begin - 1 + len(text):]
        with open(path, "w") as f:
            f.write("\n".join(lines))
    return setup

def _set_columns_file(root, rel, line_number, begin, text):
    path = os.path.join(root, rel)
    with open(path) as f:
        lines = f.read().split("\n")
    line = lines[line_number - 1]
    lines[line_number - 1] = line[:begin - 1] + text + line[begin - 1 + len(text):]
    with open(path, "w") as f:
        f.write("\n".join(lines))

def _insert(root, after_line, text):
    path = os.path.join(root, "config.yaml")
    with open(path) as f:
        lines = f.read().split("\n")
    lines.insert(after_line, text)
    with open(path, "w") as f:
        f.write("\n".join(lines))


def _insert_file(root, rel, after_line, text):
    path = os.path.join(root, rel)
    with open(path) as f:
        lines = f.read().split("\n")
    lines.insert(after_line, text)
    with open(path, "w") as f:
        f.write("\n".join(lines))

def _bytes_at(root, rel, line_number, column, data):
    path = os.path.join(root, rel)
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    line = lines[line_number - 1]
    lines[line_number - 1] = line[:column - 1] + data + line[column - 1 + len(data):]
    with open(path, "wb") as f:
        f.write(b"\n".join(lines))

def _copy(root, src, dst):
    import shutil
    shutil.copy(os.path.join(root, src), os.path.join(root, dst))


CASES = []


def case(name, family, err, **fields):
    CASES.append(dict(name=name, family=family, err=err, **fields))

# ================================================================== config: YAML syntax

case("yaml_unclosed_flow_map", "config", r"<CFG>:16:8: YAML syntax error: end of map flow not found",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5")])
case("yaml_tab_indentation", "config", r"<CFG>:7:6: YAML syntax error: illegal map value",
     sub=[(r"^  type: langevin_middle", "\ttype: langevin_middle")])
case("yaml_bad_indentation", "config", r"<CFG>:8:15: YAML syntax error: illegal map value",
     sub=[(r"^  temperature: 300 K", "   temperature: 300 K")])
# yaml-cpp ends an unclosed quoted scalar at the next quote or at the end of the file: the error is then about the
# value that swallowed the lines, at its place.
case("yaml_unclosed_quote", "config", r"<CFG>:19:13: 'progress' must be true or false",
     sub=[(r"progress: false", 'progress: "false')])
case("yaml_unclosed_quote_swallows_lines", "config", r"<CFG>:8:16: 'temperature': unknown temperature unit "
     r"'K friction: 1/ps", sub=[(r"temperature: 300 K", 'temperature: "300 K')])
case("yaml_unclosed_quote_mid_file", "config", r"<CFG>:19:14: YAML syntax error: end of map not found",
     sub=[(r"temperature: 300 K", 'temperature: "300 K'), (r"progress: false", 'progress: "false"')])
case("yaml_unclosed_sequence", "config", r"<CFG>:4:19: YAML syntax error: end of sequence flow not found",
     sub=[(r"\[amber14-all.xml\]", "[amber14-all.xml")])
# An empty config has no line to point at: the file is named.
case("yaml_empty_file", "config", r"<CFG>: the config must be a YAML mapping", config="")
case("yaml_only_comments", "config", r"<CFG>: the config must be a YAML mapping", config="# nothing here\n# at all\n")
case("yaml_scalar_document", "config", r"<CFG>:1:1: the config must be a YAML mapping", config="ala2_vacuum.pdb\n")
case("yaml_list_document", "config", r"<CFG>:1:1: the config must be a YAML mapping",
     config="- system\n- run\n")
case("yaml_binary_garbage", "config", r"<CFG>:1:1: the config is not a text file: byte 0x00",
     config=bytes(range(256)) * 4)
case("yaml_binary_after_text", "config", r"<CFG>:20:1: the config is not a text file: byte 0x01",
     append="\x01\x02\x03binary tail")
case("yaml_non_utf8_key", "config", r"<CFG>:8:7: the config is not valid UTF-8: byte 0xe9",
     sub=[(r"^  temperature", "  temp\xe9rature")], setup=lambda root: _latin1(root))
case("yaml_truncated_utf8", "config", r"<CFG>:20:3: the config is not valid UTF-8: byte 0xc3",
     append="# Å", setup=lambda root: _chop(root))
case("yaml_nul_byte", "config", r"<CFG>:12:11: the config is not a text file: byte 0x00",
     sub=[(r"steps: 10", "steps: 1\x000")])

# ================================================================== config: keys

case("key_unknown_top_level_misspelt", "config",
     r"<CFG>:20:1: unknown key 'integrater' at the top level \(did you mean 'integrator'\?\)",
     append="integrater:\n  seed: 1\n")
case("key_unknown_top_level", "config", r"<CFG>:20:1: unknown key 'analysis' at the top level \(valid keys: system, ",
     append="analysis: {}\n")
case("key_misspelt_system", "config", r"<CFG>:4:3: unknown key 'nonbonded_methd' in 'system' \(did you mean "
     r"'nonbonded_method'\?\)", sub=[(r"nonbonded_method:", "nonbonded_methd:")])
case("key_misspelt_integrator_transposed", "config", r"<CFG>:8:3: unknown key 'temprature' in 'integrator' "
     r"\(did you mean 'temperature'\?\)", sub=[(r"  temperature:", "  temprature:")])
case("key_misspelt_output", "config", r"<CFG>:15:3: unknown key 'trajectroy' in 'output' \(did you mean "
     r"'trajectory'\?\)", sub=[(r"  trajectory:", "  trajectroy:")])
case("key_misspelt_run", "config", r"<CFG>:12:3: unknown key 'stpes' in 'run' \(did you mean 'steps'\?\)",
     sub=[(r"steps: 10", "stpes: 10")])
case("key_misspelt_nested_trajectory", "config", r"<CFG>:15:16: unknown key 'intreval' in 'output.trajectory' "
     r"\(did you mean 'interval'\?\)", sub=[(r"trajectory: \{interval", "trajectory: {intreval")])
case("key_unknown_no_suggestion", "config", r"<CFG>:11:3: unknown key 'banana' in 'integrator' \(valid keys: type, ",
     setup=lambda root: _insert(root, 10, "  banana: 1"))
case("key_misspelt_platform_mapping", "config", r"<CFG>:5:12: unknown key 'nmae' in 'platform' \(did you mean "
     r"'name'\?\)", sub=[(r"^platform: cpu", "platform: {nmae: cpu}")])
case("key_duplicate_in_section", "config", r"<CFG>:11:3: key 'temperature' appears twice in 'integrator' "
     r"\(also on line 8\)", setup=lambda root: _insert(root, 10, "  temperature: 310 K"))
case("key_duplicate_section", "config", r"<CFG>:20:1: key 'run' appears twice at the top level \(also on line 11\)",
     append="run:\n  steps: 20\n")
case("key_duplicate_in_flow_map", "config", r"<CFG>:15:29: key 'interval' appears twice in 'output.trajectory'",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, interval: 10}")])
case("section_system_missing", "config", r"<CFG>:1:1: missing section 'system'",
     sub=[(r"^system:\n  pdb: ala2_vacuum.pdb\n  forcefield: \[amber14-all.xml\]\n  nonbonded_method: no_cutoff\n", "")])
case("section_system_without_pdb", "config", r"<CFG>:2:3: 'system' needs the key 'structure'",
     sub=[(r"^  pdb: ala2_vacuum.pdb\n", "")])
case("section_system_is_scalar", "config", r"<CFG>:1:9: 'system' must be a mapping",
     config="system: ala2_vacuum.pdb\n")
case("section_integrator_is_list", "config", r"<CFG>:7:3: 'integrator' must be a mapping",
     sub=[(r"^  type: langevin_middle\n  temperature: 300 K\n  friction: 1/ps\n  timestep: 2 fs\n",
           "  - type: verlet\n")])
case("section_output_empty", "config", r"<CFG>:1[34]:1: 'output' must be a mapping",
     sub=[(r"^output:\n(  .*\n)+", "output:\n")])

# ================================================================== config: types and choices

case("type_temperature_list", "config", r"<CFG>:8:16: 'temperature' must be a temperature \(a number in K",
     sub=[(r"temperature: 300 K", "temperature: [300]")])
case("type_temperature_word", "config", r"<CFG>:8:16: 'temperature': expected a number or a temperature",
     sub=[(r"temperature: 300 K", "temperature: hot")])
case("type_timestep_bool", "config", r"<CFG>:10:13: 'timestep': expected a number or a time",
     sub=[(r"timestep: 2 fs", "timestep: true")])
case("type_steps_fraction", "config", r"<CFG>:12:10: 'steps' must be a whole number",
     sub=[(r"steps: 10", "steps: 10.5")])
case("type_steps_word", "config", r"<CFG>:12:10: 'steps' must be a whole number", sub=[(r"steps: 10", "steps: ten")])
case("type_seed_negative", "config", r"<CFG>:11:9: 'seed' must be a non-negative whole number",
     setup=lambda root: _insert(root, 10, "  seed: -1"))
case("type_bool_word", "config", r"<CFG>:5:16: 'rigid_water' must be true or false",
     sub=[(r"^  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  rigid_water: maybe\n")])
case("type_forcefield_mapping", "config", r"<CFG>:3:15: 'forcefield' must be a file name or a list",
     sub=[(r"\[amber14-all.xml\]", "{file: amber14-all.xml}")])
case("type_forcefield_empty_list", "config", r"<CFG>:3:15: 'forcefield' must be a file name or a list",
     sub=[(r"\[amber14-all.xml\]", "[]")])
case("type_replicate_two", "config", r"<CFG>:5:14: 'replicate' must be a list of three whole numbers",
     sub=[(r"^  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  replicate: [2, 2]\n")])
case("type_replicate_nonperiodic", "config", r"<CFG>:5:14: 'replicate' tiles a periodic box",
     sub=[(r"^  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  replicate: [2, 2, 2]\n")])
case("type_replicate_overflow", "config", r"<CFG>:6:15: 'replicate' must be at most 2147483647, got 4294967297",
     base="wat", sub=[(r"^  cutoff: 1.0 nm\n", "  cutoff: 1.0 nm\n  replicate: [4294967297, 1, 1]\n")])
case("choice_platform_name", "config", r"<CFG>:5:11: 'platform' must be one of auto \| cpu \| cuda, got 'gpu'",
     sub=[(r"^platform: cpu", "platform: gpu")])
case("choice_platform_device_negative", "config", r"<CFG>:5:31: 'device' must be at least 0, got -1",
     sub=[(r"^platform: cpu", "platform: {name: cpu, device: -1}")])
case("choice_nonbonded_method", "config", r"<CFG>:4:21: 'nonbonded_method' must be one of .*got 'pmee' "
     r"\(did you mean 'pme'\?\)", sub=[(r"no_cutoff", "pmee")])
case("choice_constraints", "config", r"<CFG>:5:16: 'constraints' must be one of .*got 'hbond' \(did you mean "
     r"'hbonds'\?\)",
     sub=[(r"^  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  constraints: hbond\n")])
case("choice_integrator_type", "config", r"<CFG>:7:9: 'type' must be one of langevin_middle \| verlet, got 'langevin'",
     sub=[(r"type: langevin_middle", "type: langevin")])
case("choice_initial_velocities", "config", r"<CFG>:13:23: 'initial_velocities' must be one of .*got 'random'",
     sub=[(r"steps: 10\n", "steps: 10\n  initial_velocities: random\n")])
case("choice_trajectory_atoms_syntax", "config", r"<CFG>:15:\d+: .*atoms.*'?0-21,abc",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, atoms: '0-21,abc'}")])

# ================================================================== config: stages (staged protocols)

# The vacuum config without its run length; the stages follow on line 18.
NO_RUN = [(r"run:\n  steps: 10\n", "")]
case("stages_unknown_key", "config", r"<CFG>:20:5: unknown key 'stpes' in 'stages\[1\]' \(did you mean 'steps'\?\)",
     sub=NO_RUN, append="stages:\n  - name: nvt\n    stpes: 10\n")
case("stages_empty_list", "config", r"<CFG>:18:9: 'stages' is empty: give at least one stage", sub=NO_RUN,
     append="stages: []\n")
case("stages_bad_force_constant_unit", "config", r"<CFG>:19:47: 'k': unknown force constant unit 'kJ/mol/nm' "
     r"\(accepted: kJ/mol/nm\^2", sub=NO_RUN, append="stages:\n  - {steps: 10, restraints: {atoms: heavy, k: 10 kJ/mol/nm}}\n")
case("stages_neither_minimize_nor_steps", "config", r"<CFG>:19:5: stage 'heat' does nothing: give it 'steps' or "
     r"'time' \(dynamics\), 'minimize', or both", sub=NO_RUN, append="stages:\n  - name: heat\n    integrator: {temperature: 310 K}\n")
case("stages_duplicate_names", "config", r"<CFG>:20:12: stage name 'nvt' is used twice \(also stage 1\)", sub=NO_RUN,
     append="stages:\n  - {name: nvt, steps: 5}\n  - {name: nvt, steps: 5}\n")
case("stages_with_run_steps", "config", r"<CFG>:12:10: 'run.steps' and 'stages' both set the run's length",
     append="stages:\n  - {steps: 5}\n")
case("stages_with_top_level_minimize", "config", r"<CFG>:18:11: 'minimize' and 'stages' both present: with 'stages' a "
     r"minimisation is a stage", sub=NO_RUN, append="minimize: {}\nstages:\n  - {steps: 5}\n")
case("stages_selection_matches_nothing", "config", r"<CFG>:19:29: stages\[1\].restraints.atoms: atom selection "
     r"\"water\" matches none of the 22 atoms", sub=NO_RUN, append="stages:\n  - {steps: 5, restraints: {atoms: water, k: 100}}\n")
case("stages_selection_syntax", "config", r"<CFG>:19:29: stages\[1\].restraints.atoms: invalid atom selection "
     r"\"protein and\": expected a keyword or an atom index at character 12", sub=NO_RUN,
     append="stages:\n  - {steps: 5, restraints: {atoms: protein and, k: 100}}\n")
case("stages_check_selection_matches_nothing", "cli", r"<CFG>:19:29: stages\[1\].restraints.atoms: atom selection "
     r"\"water\" matches none", sub=NO_RUN, append="stages:\n  - {steps: 5, restraints: {atoms: water, k: 100}}\n",
     args=["check", "<CFG>"])
case("stages_reference_other_atoms", "config", r"<CFG>:19:51: stages\[1\].restraints.reference: (<DIR>/)?ref.pdb has 9 "
     r"atoms, the system 22", sub=NO_RUN, write={"ref.pdb": H2O_PDB},
     append="stages:\n  - {steps: 5, restraints: {atoms: heavy, k: 100, reference: ref.pdb}}\n")
case("stages_resume_changed_stage", "checkpoint", r"<CFG>:21:5: --resume: stage 2 differs from the one "
     r"<DIR>/out/checkpoint.h5 was written by \(checkpoint: \"restrained: .*1000 kJ/mol/nm\^2.*config: "
     r"\"restrained: .*500 kJ/mol/nm\^2", base="vac_staged_done", sub=[(r"k: 1000 kJ/mol/nm\^2", "k: 500 kJ/mol/nm^2")],
     args=RESUME)
case("stages_resume_without_stages", "checkpoint", r"<DIR>/out/checkpoint.h5: --resume: the checkpoint was written in "
     r"stage 'free' of a staged run, but the config has no 'stages'", base="vac_staged_done",
     sub=[(r"stages:\n(.|\n)*", "run:\n  steps: 30\n")], args=RESUME)
case("stages_resume_single_run_checkpoint", "checkpoint", r"<CFG>:18:1: --resume: <DIR>/out/checkpoint.h5 was written "
     r"by a run without stages", base="vac_done", sub=NO_RUN, append="stages:\n  - {steps: 20}\n", args=RESUME)

# ================================================================== config: replica ensembles

NO_T = [(r"^  temperature: 300 K\n", "")]
LADDER = "replicas: {exchange: temperature, temperatures: [300 K, 320 K], exchange_interval: 10 fs}\n"
case("replicas_temperatures_not_increasing", "config", r"<CFG>:19:57: 'temperatures' must increase: 290 K is not above "
     r"the temperature before it \(300 K\)", sub=NO_T,
     append="replicas: {exchange: temperature, temperatures: [300 K, 290 K], exchange_interval: 10 fs}\n")
case("replicas_interval_not_whole_steps", "config", r"<CFG>:19:84: 'exchange_interval' \(0.003 ps\) is not a whole "
     r"number of time steps \(0.002 ps\): e.g. 0.004 ps", sub=NO_T, append=LADDER.replace("10 fs", "3 fs"))
case("replicas_integrator_temperature", "config", r"<CFG>:8:16: 'integrator.temperature' does not apply with "
     r"temperature exchange", append=LADDER)
case("replicas_checkpoint_interval", "config", r"<CFG>:16:26: the ensemble's checkpoints are written after an exchange "
     r"round: output.checkpoint.interval \(5 steps\) must be a multiple of replicas.exchange_interval \(10 steps\)",
     sub=NO_T, append=LADDER.replace("10 fs", "20 fs"))
case("replicas_one_copy", "config", r"<CFG>:20:35: 'count' must be at least 2, got 1",
     append="replicas: {exchange: none, count: 1}\n")
case("replicas_verlet", "config", r"<CFG>:19:22: temperature exchange needs a heat bath: integrator.type is verlet",
     sub=NO_T + [(r"type: langevin_middle", "type: verlet")], append=LADDER)
case("replicas_with_stages", "config", r"<CFG>:20:11: 'replicas' and 'stages' cannot be combined", sub=NO_RUN,
     append="stages:\n  - {steps: 20}\nreplicas: {exchange: none, count: 2}\n")
case("replicas_resume_single_run_checkpoint", "checkpoint", r"<DIR>/out/checkpoint.h5: the checkpoint of a single run, "
     r"not of a replica ensemble", base="vac_done", append="replicas: {exchange: none, count: 2}\n", args=RESUME)
case("demux_without_ladder", "config", r"<CFG>:20:12: demux sorts a temperature ladder's outputs by temperature",
     append="replicas: {exchange: none, count: 2}\n", args=["demux", "<CFG>"])

# ================================================================== config: units

case("unit_timestep_unknown", "config", r"<CFG>:10:13: 'timestep': unknown time unit 'parsec'",
     sub=[(r"timestep: 2 fs", "timestep: 2 parsec")])
case("unit_temperature_celsius", "config", r"<CFG>:8:16: 'temperature': unknown temperature unit 'C'",
     sub=[(r"temperature: 300 K", "temperature: 27 C")])
case("unit_cutoff_mass", "config", r"<CFG>:5:11: 'cutoff': unknown length unit 'kg'",
     sub=[(r"^  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  cutoff: 1 kg\n")])
case("unit_friction_as_time", "config", r"<CFG>:9:13: 'friction': unknown frequency unit 'ps'",
     sub=[(r"friction: 1/ps", "friction: 1 ps")])
case("unit_pressure_temperature", "config", r"<CFG>:19:22: 'pressure': unknown pressure unit 'K'",
     base="wat", append="barostat: {pressure: 1 K}\n")
case("unit_timestep_bare_number_means_ps", "config",
     r"<CFG>:10:13: 'timestep' \(2 ps\) is longer than 20 fs.*a bare number is in ps: did you mean '2 fs'\?",
     sub=[(r"timestep: 2 fs", "timestep: 2")])
case("unit_flush_interval_hours", "config", r"<CFG>:15:45: 'flush_interval' must be a wall-clock time",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, flush_interval: 2 hours}")])

# ================================================================== config: physical ranges

for key, line, col, text in [("temperature", 8, 16, "-300 K"), ("temperature", 8, 16, "0 K"),
                             ("timestep", 10, 13, "-2 fs"), ("timestep", 10, 13, "0 fs")]:
    case(f"range_{key}_{text.split()[0].replace('-', 'minus')}", "config",
         rf"<CFG>:{line}:{col}: '{key}' must be greater than zero", sub=[(rf"{key}: \S+( \S+)?$", f"{key}: {text}")])
for key, line, col in [("temperature", 8, 16), ("timestep", 10, 13), ("friction", 9, 13)]:
    for value in [".nan", "nan", ".inf", "-inf", "1e400"]:
        case(f"range_{key}_{value.replace('.', 'yaml').replace('-', 'minus')}", "config",
             rf"<CFG>:{line}:{col}: '{key}': expected a (finite )?number",
             sub=[(rf"{key}: \S+( \S+)?$", f"{key}: {value}")])
case("range_temperature_huge", "config", r"<CFG>:8:16: 'temperature' \(1e\+30 K\) is above 100000 K",
     sub=[(r"temperature: 300 K", "temperature: 1e30 K")])
case("range_timestep_huge", "config", r"<CFG>:10:13: 'timestep' \(1000 ps\) is longer than 20 fs",
     sub=[(r"timestep: 2 fs", "timestep: 1 ns")])
case("range_friction_negative", "config", r"<CFG>:9:13: 'friction' must be no less than zero",
     sub=[(r"friction: 1/ps", "friction: -1/ps")])
case("range_cutoff_negative", "config", r"<CFG>:5:11: 'cutoff' must be greater than zero",
     base="wat", sub=[(r"cutoff: 1.0 nm", "cutoff: -1 nm")])
case("range_cutoff_zero", "config", r"<CFG>:5:11: 'cutoff' must be greater than zero",
     base="wat", sub=[(r"cutoff: 1.0 nm", "cutoff: 0")])
case("range_cutoff_inf", "config", r"<CFG>:5:11: 'cutoff': expected a (finite )?number",
     base="wat", sub=[(r"cutoff: 1.0 nm", "cutoff: .inf")])
case("range_cutoff_over_half_box", "config", r"<CFG>:5:3: cutoff 2 nm is longer than half the smallest box height "
     r"of .*ala2_water.pdb \(1.59\d* nm\)", base="wat", sub=[(r"cutoff: 1.0 nm", "cutoff: 2 nm")])
case("range_cutoff_over_half_box_check", "config", r"<CFG>:5:3: cutoff 2 nm is longer than half the smallest box "
     r"height", base="wat", sub=[(r"cutoff: 1.0 nm", "cutoff: 20 A")], args=["check", "<CFG>"])
case("range_switch_equal_cutoff", "config", r"<CFG>:6:20: 'switch_distance' \(1 nm\) must be shorter than 'cutoff' "
     r"\(1 nm\)", base="wat", sub=[(r"cutoff: 1.0 nm\n", "cutoff: 1.0 nm\n  switch_distance: 10 A\n")])
case("range_switch_above_cutoff", "config", r"<CFG>:6:20: 'switch_distance' \(1.2 nm\) must be shorter than 'cutoff' "
     r"\(1 nm\)", base="wat", sub=[(r"cutoff: 1.0 nm\n", "cutoff: 1.0 nm\n  switch_distance: 1.2 nm\n")])
case("range_switch_above_default_cutoff", "config", r"<CFG>:5:20: 'switch_distance' \(1.5 nm\) must be shorter than "
     r"'cutoff' \(1 nm\)", sub=[(r"no_cutoff\n", "no_cutoff\n  switch_distance: 1.5 nm\n")])
case("range_switch_negative", "config", r"<CFG>:6:20: 'switch_distance' must be greater than zero",
     base="wat", sub=[(r"cutoff: 1.0 nm\n", "cutoff: 1.0 nm\n  switch_distance: -0.8 nm\n")])
case("range_pressure_negative", "config", r"<CFG>:19:22: 'pressure' must be greater than zero",
     base="wat", append="barostat: {pressure: -1 bar}\n")
case("range_pressure_huge", "config", r"<CFG>:19:22: 'pressure' \(1e\+10 bar\) is above 100000 bar \(10 GPa\)",
     base="wat", append="barostat: {pressure: 1e10 bar}\n")
case("range_pressure_nan", "config", r"<CFG>:19:22: 'pressure': expected a (finite )?number",
     base="wat", append="barostat: {pressure: .nan}\n")
case("range_barostat_interval_zero", "config", r"<CFG>:19:22: 'interval' must be at least 1, got 0",
     base="wat", append="barostat: {interval: 0}\n")
case("range_barostat_interval_overflow", "config", r"<CFG>:19:22: 'interval' must be at most 2147483647, got 4294967296",
     base="wat", append="barostat: {interval: 4294967296}\n")
case("range_barostat_temperature_negative", "config", r"<CFG>:19:25: 'temperature' must be greater than zero",
     base="wat", append="barostat: {temperature: -5 K}\n")
case("range_barostat_nonperiodic", "config", r"<CFG>:20:1: 'barostat' needs a periodic system \(nonbonded_method"
     r" pme or cutoff_periodic; this config's is no_cutoff\)",
     append="barostat:\n  pressure: 1 bar\n")
case("range_ewald_tolerance_zero", "config", r"<CFG>:6:20: 'ewald_tolerance' must lie in \[1e-10, 0.5\)",
     base="wat", sub=[(r"cutoff: 1.0 nm\n", "cutoff: 1.0 nm\n  ewald_tolerance: 0\n")])
case("range_ewald_tolerance_large", "config", r"<CFG>:6:20: 'ewald_tolerance' must lie in \[1e-10, 0.5\)",
     base="wat", sub=[(r"cutoff: 1.0 nm\n", "cutoff: 1.0 nm\n  ewald_tolerance: 0.7\n")])
case("range_ewald_tolerance_nan", "config", r"<CFG>:6:20: 'ewald_tolerance' must be a number",
     base="wat", sub=[(r"cutoff: 1.0 nm\n", "cutoff: 1.0 nm\n  ewald_tolerance: .nan\n")])
case("range_ewald_tolerance_unit", "config", r"<CFG>:6:20: 'ewald_tolerance' must be a number",
     base="wat", sub=[(r"cutoff: 1.0 nm\n", "cutoff: 1.0 nm\n  ewald_tolerance: 5e-4 nm\n")])
case("range_steps_negative", "config", r"<CFG>:12:10: 'steps' must be at least 0, got -5",
     sub=[(r"steps: 10", "steps: -5")])
case("range_steps_overflow", "config", r"<CFG>:12:10: 'steps' must be a whole number",
     sub=[(r"steps: 10", "steps: 99999999999999999999999")])
case("range_steps_beyond_count", "config", r"<CFG>:12:10: 'steps' \(1152921504606846976\) is more than",
     sub=[(r"steps: 10", "steps: 1152921504606846976")])
case("range_time_negative", "config", r"<CFG>:12:9: 'time' must be no less than zero",
     sub=[(r"steps: 10", "time: -1 ps")])
case("range_time_not_whole_steps", "config", r"<CFG>:12:9: 'time' \(0.003 ps\) is not a whole number of time steps",
     sub=[(r"steps: 10", "time: 3 fs")])
case("range_steps_and_time", "config", r"<CFG>:13:9: give either 'steps' or 'time' in 'run', not both",
     sub=[(r"steps: 10\n", "steps: 10\n  time: 20 fs\n")])
case("range_interval_negative", "config", r"<CFG>:16:21: 'interval' must be at least 0, got -1",
     sub=[(r"state: \{interval: 5\}", "state: {interval: -1}")])
case("range_interval_fraction", "config", r"<CFG>:17:26: 'interval' must be a whole number",
     sub=[(r"checkpoint: \{interval: 5\}", "checkpoint: {interval: 2.5}")])
case("range_interval_overflow", "config", r"<CFG>:15:26: 'interval' must be at most 2147483647, got 10000000000",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 10000000000}")])
case("range_max_iterations_overflow", "config", r"<CFG>:20:28: 'max_iterations' must be at most 2147483647",
     append="minimize: {max_iterations: 3000000000}\n")
case("range_flush_interval_zero", "config", r"<CFG>:15:45: 'flush_interval' must be greater than zero",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, flush_interval: 0}")])
case("range_constraint_tolerance", "config", r"<CFG>:11:25: 'constraint_tolerance' must lie between 0 and 1",
     setup=lambda root: _insert(root, 10, "  constraint_tolerance: 2"))
case("range_neighbor_buffer", "config", r"<CFG>:5:40: 'neighbor_buffer' must be at most 0.5 nm",
     sub=[(r"^platform: cpu", "platform: {name: cpu, neighbor_buffer: 1 nm}")])
case("range_hydrogen_mass_negative", "config", r"<CFG>:5:18: 'hydrogen_mass' must be greater than zero",
     sub=[(r"no_cutoff\n", "no_cutoff\n  hydrogen_mass: -1\n")])
case("range_hydrogen_mass_heavier_than_carbon", "config",
     r"<DIR>/ala2_vacuum.pdb:3: hydrogen mass 20 amu leaves atom 'CH3' of residue ACE 1 .* with mass -44.9\d* amu",
     sub=[(r"no_cutoff\n", "no_cutoff\n  hydrogen_mass: 20 amu\n")])
case("range_minimize_tolerance_negative", "config", r"<CFG>:20:23: 'tolerance' must be greater than zero",
     append="minimize: {tolerance: -10}\n")
case("range_atoms_index_out_of_range_run", "config", r"<CFG>:15:\d+: .*(atoms|selection).*(22|out of range|only)",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, atoms: '0-99'}")])
case("range_atoms_index_out_of_range_check", "config", r"<CFG>:15:\d+: .*(atoms|selection).*(22|out of range|only)",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, atoms: '0-99'}")], args=["check", "<CFG>"])
case("range_atoms_empty_selection", "config", r"<CFG>:15:\d+: .*water.*(no atoms|empty|matches none)",
     sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, atoms: water}")])
case("platform_cuda_without_device_run", "config", r"<CFG>:5:1: .*cuda.*no usable CUDA device.*platform: auto",
     sub=[(r"^platform: cpu", "platform: cuda")], no_cuda=True)
case("platform_cuda_without_device_check", "config", r"<CFG>:5:1: .*cuda.*no usable CUDA device.*platform: auto",
     sub=[(r"^platform: cpu", "platform: cuda")], args=["check", "<CFG>"], no_cuda=True)

# ================================================================== pdb

case("pdb_missing", "pdb", r"<CFG>:2:8: 'pdb': file not found: <DIR>/nothing.pdb",
     sub=[(r"pdb: ala2_vacuum.pdb", "pdb: nothing.pdb")])
case("pdb_is_directory", "pdb", r"<CFG>:2:8: 'pdb': <DIR>/structures is a directory", mkdir=["structures"],
     sub=[(r"pdb: ala2_vacuum.pdb", "pdb: structures")])
case("pdb_is_fifo", "pdb", r"<CFG>:2:8: 'pdb': <DIR>/pipe.pdb is a FIFO \(named pipe\), not a regular file",
     fifo=["pipe.pdb"],
     sub=[(r"pdb: ala2_vacuum.pdb", "pdb: pipe.pdb")])
case("pdb_dangling_symlink", "pdb", r"<CFG>:2:8: 'pdb': file not found: <DIR>/link.pdb",
     symlink={"link.pdb": "gone.pdb"}, sub=[(r"pdb: ala2_vacuum.pdb", "pdb: link.pdb")])
case("pdb_empty", "pdb", r"<DIR>/ala2_vacuum.pdb: no ATOM or HETATM records found", write={PDB: ""})
case("pdb_only_remarks", "pdb", r"<DIR>/ala2_vacuum.pdb: no ATOM or HETATM records found",
     write={PDB: "REMARK   1 nothing\nEND\n"})
case("pdb_binary_garbage", "pdb", r"<DIR>/ala2_vacuum.pdb: no ATOM or HETATM records found",
     write={PDB: bytes(range(256)) * 8})
case("pdb_binary_in_atom_record", "pdb", r"<DIR>/ala2_vacuum.pdb:9:56: byte 0x00 in column 56 is not ASCII",
     setup=lambda root: _bytes_at(root, PDB, 9, 56, b"\x00\x01"))
case("pdb_truncated_line", "pdb", r"<DIR>/ala2_vacuum.pdb:5:41: ATOM/HETATM record is 40 characters long",
     setup=lambda root: _truncate_line(root, 5, 40))
case("pdb_truncated_file", "pdb", r"<DIR>/ala2_vacuum.pdb:15:45: ATOM/HETATM record is 44 characters long",
     setup=lambda root: _cut_file_at(root, PDB, 15, 44))
case("pdb_truncated_between_records", "pdb", r"<DIR>/ala2_vacuum.pdb:8: no force field template matches residue "
     r"ALA 2.*missing atoms \[HB3 C O\]", setup=lambda root: _cut_file_at(root, PDB, 15, 0))
case("pdb_bad_x", "pdb", r"<DIR>/ala2_vacuum.pdb:8:31: expected a number for the x coordinate in columns 31-38, "
     r"found '   1.2.3'", setup=_set_columns(8, 31, "   1.2.3"))
case("pdb_nonnumeric_y", "pdb", r"<DIR>/ala2_vacuum.pdb:9:39: expected a number for the y coordinate .*found '     abc'",
     setup=_set_columns(9, 39, "     abc"))
case("pdb_blank_z", "pdb", r"<DIR>/ala2_vacuum.pdb:10:47: expected a number for the z coordinate",
     setup=_set_columns(10, 47, "        "))
case("pdb_nan_coordinate", "pdb", r"<DIR>/ala2_vacuum.pdb:11:31: expected a number for the x coordinate .*'     nan'",
     setup=_set_columns(11, 31, "     nan"))
case("pdb_inf_coordinate", "pdb", r"<DIR>/ala2_vacuum.pdb:11:39: expected a number for the y coordinate .*'    -inf'",
     setup=_set_columns(11, 39, "    -inf"))
case("pdb_huge_coordinate", "pdb", r"<DIR>/ala2_vacuum.pdb:12:31: the x coordinate in columns 31-38 is '1e\+30' Å, "
     r"beyond the 100000 Å",
     setup=_set_columns(12, 31, "   1e+30"))
case("pdb_huge_coordinate_periodic", "pdb", r"<DIR>/ala2_water.pdb:40:47: the z coordinate .* is '1e\+30' Å",
     base="wat", setup=lambda root: _set_columns_file(root, "ala2_water.pdb", 40, 47, "   1e+30"))
case("pdb_unknown_element", "pdb", r"<DIR>/ala2_vacuum.pdb:8:77: cannot determine the element of atom 'QN'",
     setup=lambda root: (_set_columns(8, 13, "QN  ")(root), _set_columns(8, 77, "Xq")(root)))
case("pdb_unknown_residue", "pdb", r"<DIR>/ala2_vacuum.pdb:8: no template for residue ALX 2 \(chain ' '\): supply "
     r"its force field XML \(system.forcefield; for mdsim prepare, --forcefield\); its atoms are those of template ALA: a misspelt residue name\?",
     edit={PDB: [(r" ALA ", " ALX ")]})
case("pdb_misaligned_residue", "pdb", r"<DIR>/ala2_vacuum.pdb:2:18: misaligned residue name ' ACE'",
     setup=_set_columns(2, 18, " ACE"))
case("pdb_unknown_four_letter_residue", "pdb", r"<DIR>/ala2_vacuum.pdb:2: no template for residue ACEX 1 \(chain ' '\): "
     r"supply its force field XML \(system.forcefield; for mdsim prepare, --forcefield\)$", setup=_set_columns(2, 18, "ACEX"))
case("pdb_missing_atom", "pdb", r"<DIR>/ala2_vacuum.pdb:8: residue ALA 2 \(chain ' '\) lacks 1 hydrogen \(HB3\) of "
     r"template ALA: run `mdsim prepare` to add them",
     lines={PDB: {15: None}})
case("pdb_extra_atom", "pdb", r"<DIR>/ala2_vacuum.pdb:8: no force field template matches residue ALA 2 .*extra"
     r" atoms \[HB4\]",
     setup=lambda root: _insert_file(root, PDB, 15, "ATOM     99  HB4 ALA     2       7.000   3.141  -1.241  1.00  0.00           H  "))
case("pdb_duplicate_atom_name", "pdb", r"<DIR>/ala2_vacuum.pdb:15:13: duplicate atom name 'HB2' in residue ALA 2 .*"
     r"already on line 14",
     setup=_set_columns(15, 13, " HB2"))
case("pdb_wrong_element", "pdb", r"<DIR>/ala2_vacuum.pdb:8: no force field template matches residue ALA 2 "
     r"\(chain ' '\): atom 'N' is element C in the file but N in template ALA; fix its element",
     setup=_set_columns(8, 77, " C"))
case("pdb_coincident_atoms", "pdb", r"<DIR>/ala2_vacuum.pdb:3: atom 2 \(CH3 of ACE 1\) and atom 3 \(H2 of ACE 1\) "
     r"\(line 4\) are 0.0000 nm apart, closer than 0.05 nm", setup=_set_columns(4, 31, "   2.000   2.090   0.000"))
case("pdb_coincident_through_image", "pdb", r"<DIR>/ala2_water.pdb:38: atom 36 .* \(line 42\) are 0.0000 nm apart "
     r"\(nearest periodic image\)", base="wat", args=["check", "<CFG>"],
     setup=lambda root: _set_columns_file(root, "ala2_water.pdb", 42, 31, "  51.825  21.959  20.158"))
case("pdb_no_cryst1_with_pme", "pdb", r"<CFG>:4:3: nonbonded_method 'pme' needs a periodic box, but "
     r"<DIR>/ala2_water.pdb has no CRYST1 record", base="wat", lines={"ala2_water.pdb": {2: None}})
case("pdb_no_cryst1_with_cutoff_periodic", "pdb", r"<CFG>:4:3: nonbonded_method 'cutoff_periodic' needs a periodic "
     r"box", base="wat", lines={"ala2_water.pdb": {2: None}}, sub=[(r"pme", "cutoff_periodic")])
case("pdb_cryst1_negative_length", "pdb", r"<DIR>/ala2_water.pdb:2:7: CRYST1 cell lengths must be positive",
     base="wat", edit={"ala2_water.pdb": [(r"CRYST1   32.853", "CRYST1  -32.853")]})
case("pdb_cryst1_zero_length", "pdb", r"<DIR>/ala2_water.pdb:2:25: CRYST1 cell lengths must be positive",
     base="wat", edit={"ala2_water.pdb": [(r"31.855  90.00", " 0.000  90.00")]})
case("pdb_cryst1_nonnumeric", "pdb", r"<DIR>/ala2_water.pdb:2:16: expected a number for the unit cell b in columns "
     r"16-24 of CRYST1, found '   32.8x2'", base="wat", edit={"ala2_water.pdb": [(r"32.862", "32.8x2")]})
case("pdb_cryst1_truncated", "pdb", r"<DIR>/ala2_water.pdb:2:25: expected a number for the unit cell c in columns"
     r" 25-33 of CRYST1, found ''",
     base="wat", edit={"ala2_water.pdb": [(r"^CRYST1   32.853   32.862.*$", "CRYST1   32.853   32.862")]})
case("pdb_cryst1_angle_zero", "pdb", r"<DIR>/ala2_water.pdb:2:34: CRYST1 cell angles must lie between 0 and 180",
     base="wat", edit={"ala2_water.pdb": [(r"90.00  90.00  90.00", " 0.00  90.00  90.00")]})
case("pdb_cryst1_angles_impossible", "pdb", r"<DIR>/ala2_water.pdb:2:34: CRYST1 cell angles do not describe a valid",
     base="wat", edit={"ala2_water.pdb": [(r"90.00  90.00  90.00", "10.00 170.00  90.00")]})
case("pdb_cryst1_nan", "pdb", r"<DIR>/ala2_water.pdb:2:7: expected a number for the unit cell a",
     base="wat", edit={"ala2_water.pdb": [(r"CRYST1   32.853", "CRYST1      nan")]})
case("pdb_conect_nonnumeric", "pdb", r"<DIR>/ala2_vacuum.pdb:25:12: expected an atom serial number in columns 12-16"
     r" of the CONECT record, found '  xyz'",
     edit={PDB: [(r"^CONECT    1    2", "CONECT    1  xyz")]})
case("pdb_non_utf8_atom_name", "pdb", r"<DIR>/ala2_vacuum.pdb:8:13: byte 0xe9 in column 13 is not ASCII text",
     setup=lambda root: _bytes_at(root, PDB, 8, 13, b"\xe9\xe9"))

# ------------------------------------------------------------------ PDBx/mmCIF structures (base h2o_cif, `mdsim check`)
CIF = "water.cif"
CIF_GZ = gzip.compress(H2O_CIF.encode(), mtime=0)
case("cif_no_coordinates", "pdb", r"<DIR>/water.cif:3: _atom_site has no coordinates \(_atom_site.Cartn_x, Cartn_y, "
     r"Cartn_z\): .*use the coordinate file of the entry", base="h2o_cif", args=["check", "<CFG>"],
     write={CIF: re.sub(r"_atom_site.Cartn_[xyz]\n", "", H2O_CIF)})
case("cif_no_atom_site", "pdb", r"<DIR>/water.cif: no _atom_site category: this PDBx/mmCIF file holds no atom "
     r"coordinates", base="h2o_cif", args=["check", "<CFG>"], write={CIF: "data_water\n_cell.length_a 10.0\n"})
# gemmi reports a short loop at its loop_ line.
case("cif_syntax_error", "pdb", r"<DIR>/water.cif:2:1: PDBx/mmCIF syntax error: Wrong number of values in the loop",
     base="h2o_cif", args=["check", "<CFG>"], edit={CIF: [(r" 27.109 3 D\n", " 27.109 3\n")]})
case("cif_not_cif", "pdb", r"<DIR>/water.cif:1:1: PDBx/mmCIF syntax error: .*fix the file there", base="h2o_cif",
     args=["check", "<CFG>"], write={CIF: "ATOM      1  O   HOH B   1      28.414  24.909  23.615\n"})
case("cif_unknown_element", "pdb", r"<DIR>/water.cif:18: unknown element 'Qx' \(_atom_site.type_symbol\) of atom 'O' "
     r"in residue HOH 2 \(chain 'C'\); write the element symbol", base="h2o_cif", args=["check", "<CFG>"],
     edit={CIF: [(r"HETATM 4 O O ", "HETATM 4 Qx O ")]})
case("cif_bad_coordinate", "pdb", r"<DIR>/water.cif:16: _atom_site.Cartn_y of atom 'H1' \(id 2\) is '23.9x5', not a "
     r"number", base="h2o_cif", args=["check", "<CFG>"], edit={CIF: [(r"23.995", "23.9x5")]})
case("cif_no_atoms", "pdb", r"<DIR>/water.cif: the file holds no atoms", base="h2o_cif", args=["check", "<CFG>"],
     write={CIF: H2O_CIF.split("HETATM 1")[0] + "#\n"})
case("cif_gz_truncated", "pdb", r"<DIR>/water.cif.gz: cannot decompress the gzip file \(unexpected end of file\): it is damaged or "
     r"truncated", base="h2o_cif", args=["check", "<CFG>"], write={"water.cif.gz": CIF_GZ[:len(CIF_GZ) // 2]},
     sub=[(r"structure: water.cif", "structure: water.cif.gz")])
case("cif_gz_not_gzip", "pdb", r"<DIR>/water.cif.gz: the name ends in .gz but the file is not gzip-compressed",
     base="h2o_cif", args=["check", "<CFG>"], write={"water.cif.gz": H2O_CIF},
     sub=[(r"structure: water.cif", "structure: water.cif.gz")])
case("cif_no_cell_with_pme", "pdb", r"<CFG>:4:3: nonbonded_method 'pme' needs a periodic box, but <DIR>/water.cif has "
     r"no _cell \(unit cell\)", base="h2o_cif", args=["check", "<CFG>"],
     sub=[(r"nonbonded_method: no_cutoff", "nonbonded_method: pme")])
case("cif_bad_cell", "pdb", r"<DIR>/water.cif:25: _cell cell angles must lie between 0 and 180 degrees \(found "
     r"gamma = 190\)", base="h2o_cif", args=["check", "<CFG>"],
     write={CIF: H2O_CIF + "_cell.length_a 30\n_cell.length_b 30\n_cell.length_c 30\n_cell.angle_alpha 90\n"
                           "_cell.angle_beta 90\n_cell.angle_gamma 190\n"})
case("cif_template_mismatch", "pdb", r"<DIR>/water.cif:21: no force field template matches residue HOH 3 "
     r"\(chain 'D'\)", base="h2o_cif", args=["check", "<CFG>"], edit={CIF: [(r"HETATM 8 H H1 ", "HETATM 8 H HX ")]})
case("structure_and_pdb_keys", "config", r"<CFG>:3:8: 'structure' and 'pdb' both name the structure file; keep one",
     base="h2o_cif", args=["check", "<CFG>"], sub=[(r"structure: water.cif\n", "structure: water.cif\n  pdb: water.cif\n")])

# ================================================================== force-field XML (base h2o: ff.xml = tip3p)

FF = "ff.xml"
case("ff_missing", "forcefield", r"<CFG>:3:16: 'forcefield': force field file 'nothere.xml' not found; searched "
     r"the folders: .*<DIR>", base="h2o",
     sub=[(r"\[ff.xml\]", "[nothere.xml]")])
case("ff_missing_second", "forcefield", r"<CFG>:3:24: 'forcefield': force field file 'nothere.xml' not found",
     base="h2o",
     sub=[(r"\[ff.xml\]", "[ff.xml, nothere.xml]")])
case("ff_directory", "forcefield", r"<CFG>:3:16: 'forcefield': <DIR>/ffdir is a directory; name a force field XML",
     base="h2o", mkdir=["ffdir"],
     sub=[(r"\[ff.xml\]", "[ffdir]")])
case("ff_empty", "forcefield", r"<DIR>/ff.xml:1:1: malformed XML: no element found", base="h2o", write={FF: ""})
case("ff_not_xml", "forcefield", r"<DIR>/ff.xml:1:1: malformed XML: syntax error", base="h2o",
     write={FF: "mass = 16\n"})
case("ff_binary", "forcefield", r"<DIR>/ff.xml:1:1: malformed XML: not well-formed", base="h2o",
     write={FF: bytes(range(1, 256))})
case("ff_truncated", "forcefield", r"<DIR>/ff.xml:18:2: malformed XML: unclosed token", base="h2o",
     setup=truncate(FF, 0.6))
case("ff_mismatched_tag", "forcefield", r"<DIR>/ff.xml:14:4: malformed XML: mismatched tag", base="h2o",
     edit={FF: [(r"</Residues>", "</Residue>")]})
case("ff_non_utf8", "forcefield", r"<DIR>/ff.xml:8:16: malformed XML: not well-formed", base="h2o",
     setup=lambda root: _bytes_at(root, FF, 8, 16, b"\xff\xfe"))
case("ff_wrong_root", "forcefield", r"<DIR>/ff.xml:1: expected an OpenMM force field file with root element"
     r" <ForceField>, found <Forcefield>", base="h2o",
     edit={FF: [(r"<ForceField>", "<Forcefield>"), (r"</ForceField>", "</Forcefield>")]})
case("ff_negative_mass", "forcefield", r"<DIR>/ff.xml:3: atom type 'tip3p-O' has mass -15.99943 amu", base="h2o",
     edit={FF: [(r'mass="15.99943"', 'mass="-15.99943"')]})
case("ff_nonnumeric_mass", "forcefield", r"<DIR>/ff.xml:4: <Type> attribute `mass` = \"light\" is not a number",
     base="h2o", edit={FF: [(r'mass="1.007947"', 'mass="light"')]})
case("ff_negative_sigma", "forcefield", r"<DIR>/ff.xml:22: sigma = -0.3 is negative", base="h2o",
     edit={FF: [(r'sigma="0.31507524065751241"', 'sigma="-0.3"')]})
case("ff_negative_epsilon", "forcefield", r"<DIR>/ff.xml:22: epsilon = -1 is negative", base="h2o",
     edit={FF: [(r'epsilon="0.635968"', 'epsilon="-1"')]})
case("ff_missing_charge", "forcefield", r"<DIR>/ff.xml:23: <Atom> needs the attribute `charge`", base="h2o",
     edit={FF: [(r'charge="0.417" ', '')]})
case("ff_missing_sigma", "forcefield", r"<DIR>/ff.xml:22: <Atom> needs the attribute `sigma`", base="h2o",
     edit={FF: [(r'sigma="0.31507524065751241" ', '')]})
case("ff_nonnumeric_charge", "forcefield", r"<DIR>/ff.xml:22: <Atom> attribute `charge` = \"minus\" is not a number",
     base="h2o", edit={FF: [(r'charge="-0.834"', 'charge="minus"')]})
case("ff_nan_charge", "forcefield", r"<DIR>/ff.xml:22: <Atom> attribute `charge` = \"nan\" is not a number",
     base="h2o", edit={FF: [(r'charge="-0.834"', 'charge="nan"')]})
case("ff_huge_bond_k", "forcefield", r"<DIR>/ff.xml:16: <Bond> attribute `k` = \"1e999\" is not a number",
     base="h2o", edit={FF: [(r'k="462750.4"', 'k="1e999"')]})
case("ff_unknown_type_in_residue", "forcefield", r"<DIR>/ff.xml:10: residue template 'HOH' atom 'H2' uses atom type"
     r" 'tip3p-X', which no <AtomTypes> defines", base="h2o",
     edit={FF: [(r'<Atom name="H2" type="tip3p-H"/>', '<Atom name="H2" type="tip3p-X"/>')]})
# OpenMM skips a <NonbondedForce> <Atom> of an unknown type; what remains is the type left without parameters.
case("ff_unknown_type_in_nonbonded", "forcefield", r"<DIR>/water.pdb:2: atom 'H1' of residue HOH 1 \(chain 'B'\) has "
     r"atom type 'tip3p-H', for which <NonbondedForce> defines no parameters", base="h2o",
     edit={FF: [(r'<Atom type="tip3p-H"', '<Atom type="tip3p-Z"')]})
case("ff_no_nonbonded_for_type", "forcefield", r"<DIR>/water.pdb:2: atom 'H1' .* has atom type 'tip3p-H', for which"
     r" <NonbondedForce> defines no parameters", base="h2o",
     edit={FF: [(r'  <Atom type="tip3p-H" charge="0.417" sigma="1" epsilon="0"/>\n', '')]})
case("ff_missing_type_name", "forcefield", r"<DIR>/ff.xml:3: <Type> needs the attribute `name`", base="h2o",
     edit={FF: [(r'<Type name="tip3p-O" ', '<Type ')]})
case("ff_unknown_element", "forcefield", r"<DIR>/ff.xml:3: atom type 'tip3p-O' has element=\"Xq\", which is not an "
     r"element symbol", base="h2o",
     edit={FF: [(r'element="O"', 'element="Xq"')]})
case("ff_missing_residue_template", "forcefield", r"<DIR>/water.pdb:1: no force field template matches residue HOH 1",
     base="h2o",
     edit={FF: [(r'   <Atom name="H2" type="tip3p-H"/>\n', ''), (r'   <Bond atomName1="O" atomName2="H2"/>\n', '')]})
case("ff_include_missing", "forcefield", r"<DIR>/ff.xml:2: included file 'absent.xml' not found next to this file",
     base="h2o",
     edit={FF: [(r"<ForceField>\n", '<ForceField>\n <Include file="absent.xml"/>\n')]})
case("ff_bond_atom_unknown", "forcefield", r"<DIR>/ff.xml:11: atom name 'H3' not found in residue template 'HOH'",
     base="h2o",
     edit={FF: [(r'atomName2="H1"', 'atomName2="H3"')]})

# ================================================================== checkpoints (run --resume; base vac_done)

CK = "out/checkpoint.h5"
case("resume_checkpoint_missing", "checkpoint", r"<DIR>/out/checkpoint.h5: no checkpoint to resume from",
     base="vac_done", remove=[CK], args=RESUME)
case("resume_checkpoint_not_hdf5", "checkpoint", r"<DIR>/out/checkpoint.h5: cannot open the checkpoint as an HDF5 "
     r"file", base="vac_done", write={CK: "step = 10\n"}, args=RESUME)
case("resume_checkpoint_empty", "checkpoint", r"<DIR>/out/checkpoint.h5: cannot open the checkpoint as an HDF5",
     base="vac_done", write={CK: ""}, args=RESUME)
case("resume_checkpoint_truncated", "checkpoint", r"<DIR>/out/checkpoint.h5: cannot open the checkpoint as an HDF5"
     r" file: the file is truncated \(cut short by a full disk or an interrupted copy\?\); resume from an intact "
     r"checkpoint or start the run afresh$",
     base="vac_done", setup=truncate(CK, 0.5), args=RESUME)
case("resume_checkpoint_is_directory", "checkpoint", r"<CFG>:17:3: output.checkpoint.file: <DIR>/out/checkpoint.h5 "
     r"exists and is a directory", base="vac_done",
     remove=[CK], mkdir=[CK], args=RESUME)
case("resume_checkpoint_other_system", "checkpoint", r"<DIR>/out/checkpoint.h5: checkpoint is for a different system",
     base="vac_done", remove=[CK], artifacts={CK: "h2o_checkpoint"}, args=RESUME)
case("resume_checkpoint_is_trajectory", "checkpoint", r"<DIR>/out/checkpoint.h5: not an mdsim checkpoint",
     base="vac_done", remove=[CK], setup=lambda root: _copy(root, "out/trajectory.h5", CK), args=RESUME)
case("resume_checkpoint_nan_positions", "checkpoint", r"<DIR>/out/checkpoint.h5: checkpoint dataset /positions\w* "
     r"holds NaN", base="vac_done", setup=h5_edit(CK, "positions_nm", "nan"), args=RESUME, needs=["h5py"])
case("resume_checkpoint_wrong_shape", "checkpoint", r"<DIR>/out/checkpoint.h5: checkpoint dataset /velocities\w* has "
     r"the wrong shape", base="vac_done", setup=h5_edit(CK, "velocities_nm_per_ps", "shape"), args=RESUME,
     needs=["h5py"])
case("resume_checkpoint_no_format", "checkpoint", r"<DIR>/out/checkpoint.h5: not an mdsim checkpoint", base="vac_done",
     setup=h5_attr(CK, "format", None), args=RESUME, needs=["h5py"])
case("resume_checkpoint_future_version", "checkpoint", r"<DIR>/out/checkpoint.h5: checkpoint format version 99",
     base="vac_done", setup=h5_attr(CK, "format_version", 99), args=RESUME, needs=["h5py"])
case("resume_changed_timestep", "checkpoint", r"<DIR>/out/checkpoint.h5: --resume continues the simulation .*"
     r"\(integrator.timestep: checkpoint 0.002 ps, config 0.001 ps\)", base="vac_done",
     sub=[(r"timestep: 2 fs", "timestep: 1 fs")], args=RESUME)
case("resume_changed_temperature", "checkpoint", r"<DIR>/out/checkpoint.h5: --resume .*\(integrator.temperature: "
     r"checkpoint 300 K, config 310 K\)", base="vac_done", sub=[(r"300 K", "310 K")], args=RESUME)
case("resume_changed_nonbonded_method", "checkpoint", r"<DIR>/out/checkpoint.h5: --resume .*nonbonded.*no_cutoff.*"
     r"cutoff_nonperiodic", base="vac_done", sub=[(r"no_cutoff", "cutoff_nonperiodic")], args=RESUME)
case("resume_changed_friction_and_type", "checkpoint", r"<DIR>/out/checkpoint.h5: --resume .*integrator.friction: "
     r"checkpoint 1 1/ps, config 2 1/ps", base="vac_done", sub=[(r"friction: 1/ps", "friction: 2/ps")], args=RESUME)
case("resume_changed_constraints", "checkpoint", r"<DIR>/out/checkpoint.h5: --resume .*constraints: checkpoint "
     r"hbonds, config none", base="vac_done", sub=[(r"no_cutoff\n", "no_cutoff\n  constraints: none\n")], args=RESUME)
case("resume_no_checkpoint_file", "checkpoint", r"<CFG>:17:3: --resume reads the checkpoint, but output.checkpoint is "
     r"off \(null\)", base="vac_done",
     sub=[(r"checkpoint: \{interval: 5\}", "checkpoint: null")], args=RESUME)
case("from_checkpoint_missing", "checkpoint", r"<DIR>/out/checkpoint.h5: no checkpoint to resume from",
     sub=[(r"steps: 10\n", "steps: 10\n  initial_velocities: from_checkpoint\n")])

# ================================================================== output paths

case("output_two_on_one_file", "output", r"<CFG>:16:30: 'output.state.file' and 'output.trajectory.file' both name "
     r"the file 'trajectory.h5'", sub=[(r"state: \{interval: 5\}", "state: {interval: 5, file: trajectory.h5}")])
case("output_final_pdb_on_state", "output", r"<CFG>:18:14: 'output.final_pdb' and 'output.state.file' both name",
     sub=[(r"final_pdb: final.pdb", "final_pdb: state.csv")])
case("output_same_file_other_spelling", "output", r"<CFG>:17:35: 'output.checkpoint.file' and "
     r"'output.trajectory.file' both name", sub=[(r"checkpoint: \{interval: 5\}",
                                                  "checkpoint: {interval: 5, file: ./x/../trajectory.h5}")])
case("output_directory_is_file", "output", r"<CFG>:14:3: output.directory: <DIR>/out exists and is a regular file, "
     r"not a folder", write={"out": "not a folder\n"})
case("output_directory_is_file_check", "output", r"<CFG>:14:3: output.directory: <DIR>/out exists and is a regular "
     r"file, not a folder", write={"out": "not a folder\n"}, args=["check", "<CFG>"])
case("output_file_is_directory", "output", r"<CFG>:15:3: output.trajectory.file: <DIR>/out/trajectory.h5 exists and "
     r"is a directory", mkdir=["out/trajectory.h5"])
case("output_file_is_fifo", "output", r"<CFG>:16:3: output.state.file: <DIR>/out/state.csv exists and is a FIFO",
     fifo=["out/state.csv"])
case("output_file_is_dev_null", "output", r"<CFG>:15:29: output.trajectory.file: /dev/null exists and is a character "
     r"device", sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, file: /dev/null}")])
case("output_final_pdb_dev_full", "output", r"<CFG>:18:3: output.final_pdb: /dev/full exists and is a character "
     r"device", sub=[(r"final_pdb: final.pdb", "final_pdb: /dev/full")])
case("output_directory_dev_null", "output", r"<CFG>:14:3: output.directory: /dev/null exists and is a character "
     r"device, not a folder", sub=[(r"directory: out", "directory: /dev/null")])
case("output_symlink_to_directory", "output", r"<CFG>:18:3: output.final_pdb: <DIR>/out/final.pdb exists and is "
     r"a directory", mkdir=["elsewhere", "out"], symlink={"out/final.pdb": "../elsewhere"})
case("output_parent_is_file", "output", r"<CFG>:14:3: output.directory: <DIR>/blocker/out cannot be created: "
     r"<DIR>/blocker is a regular file", write={"blocker": "x"}, sub=[(r"directory: out", "directory: blocker/out")])
case("output_parent_is_file_check", "output", r"<CFG>:14:3: output.directory: <DIR>/blocker/out cannot be created",
     write={"blocker": "x"}, sub=[(r"directory: out", "directory: blocker/out")], args=["check", "<CFG>"])
case("output_file_in_missing_subfolder", "output", r"<CFG>:15:29: output.trajectory.file: the folder <DIR>/out/sub "
     r"does not exist", sub=[(r"trajectory: \{interval: 5\}", "trajectory: {interval: 5, file: sub/traj.h5}")])
case("output_file_in_missing_subfolder_check", "output", r"<CFG>:17:29: output.checkpoint.file: the folder "
     r"<DIR>/out/ck does not exist", sub=[(r"checkpoint: \{interval: 5\}", "checkpoint: {interval: 5, file: ck/c.h5}")],
     args=["check", "<CFG>"])
case("output_read_only_directory", "output", r"<CFG>:14:3: output.directory: <DIR>/out is not writable",
     mkdir=["out"], readonly=["out"])
case("output_empty_file_name", "output", r"<CFG>:16:30: 'file' is empty: give a file name, or write 'state: null'",
     sub=[(r"state: \{interval: 5\}", "state: {interval: 5, file: ''}")])
case("output_empty_final_pdb", "output", r"<CFG>:18:14: 'final_pdb' is empty: give a file name, or write "
     r"'final_pdb: null'", sub=[(r"final_pdb: final.pdb", "final_pdb: ''")])
case("output_empty_directory", "output", r"<CFG>:14:14: 'directory' is empty",
     sub=[(r"directory: out", "directory: ''")])
case("output_file_name_trailing_slash", "output", r"<CFG>:16:30: 'file' \('state/'\) names a folder",
     sub=[(r"state: \{interval: 5\}", "state: {interval: 5, file: state/}")])
case("output_file_name_dot_dot", "output", r"<CFG>:17:35: 'file' \('\.\.'\) names a folder",
     sub=[(r"checkpoint: \{interval: 5\}", "checkpoint: {interval: 5, file: ..}")])
case("energy_forces_is_directory", "output", r"--forces <DIR>/forces.h5: the path exists and is a directory",
     mkdir=["forces.h5"], args=["energy", "<CFG>", "--forces", "<DIR>/forces.h5"])
case("energy_forces_missing_folder", "output", r"--forces <DIR>/no/forces.h5: the folder <DIR>/no does not exist",
     args=["energy", "<CFG>", "--forces", "<DIR>/no/forces.h5"])
case("energy_forces_dev_null", "output", r"--forces /dev/null: the path exists and is a character device",
     args=["energy", "<CFG>", "--forces", "/dev/null"])

# ================================================================== command line

case("cli_no_arguments", "cli", r"^error: give a command: run, energy, check, bench, platforms, demux and prepare \(mdsim --help\)$",
     base="empty", args=[])
case("cli_unknown_command", "cli", r"unknown command 'rnu'; the commands are run, energy, check, bench, platforms, demux and prepare",
     args=["rnu", "<CFG>"])
case("cli_unknown_option", "cli", r"^error: The following argument was not expected: --frobnicate \(mdsim run --help\)",
     args=["run", "--frobnicate", "<CFG>"])
case("cli_unknown_global_option", "cli", r"^error: unknown option '--frobnicate' before the command",
     args=["--frobnicate", "run", "<CFG>"])
case("cli_missing_config", "cli", r"^error: CONFIG is required \(mdsim check --help\)", args=["check"])
case("cli_missing_config_run", "cli", r"^error: CONFIG is required \(mdsim run --help\)", args=["run", "--resume"])
case("cli_two_configs", "cli", r"not expected: other.yaml", args=["check", "<CFG>", "other.yaml"])
case("cli_config_missing", "cli", r"<DIR>/absent.yaml: cannot open the config file",
     args=["check", "<DIR>/absent.yaml"])
case("cli_config_is_directory", "cli", r"<DIR>: is a directory; name the config file \(YAML\) in it",
     args=["check", "<DIR>"])
case("cli_config_is_fifo", "cli", r"<DIR>/pipe.yaml: the config is a FIFO \(named pipe\), not a regular file",
     fifo=["pipe.yaml"], args=["run", "<DIR>/pipe.yaml"])
case("cli_config_is_dev_null", "cli", r"/dev/null: the config is a character device", args=["check", "/dev/null"])
case("cli_platform_bogus", "cli", r"--platform: bogus not in \{", args=["energy", "<CFG>", "--platform", "bogus"])
case("cli_platform_cuda_without_device", "cli", r"--platform cuda.*no usable CUDA device|platform 'cuda' requested "
     r"but no usable CUDA device", args=["energy", "<CFG>", "--platform", "cuda"], no_cuda=True)
case("cli_platform_missing_value", "cli", r"--platform", args=["energy", "<CFG>", "--platform"])
for value in ["-5", "many", "99999999999", "2.5", ""]:
    case(f"cli_bench_steps_{value.replace('-', 'minus').replace('.', '_') or 'empty'}", "cli",
         rf"^error: --steps: expected a whole number of steps from 0 to 2147483647, got '{re.escape(value)}' "
         r"\(mdsim bench --help\)$", args=["bench", "<CFG>", "--steps", value])
case("cli_resume_on_check", "cli", r"--resume", args=["check", "--resume", "<CFG>"])
case("cli_json_on_run", "cli", r"--json", args=["run", "--json", "<CFG>"])
case("cli_forces_missing_value", "cli", r"--forces", args=["energy", "<CFG>", "--forces"])

# ================================================================== every command stops at the same input errors

for command in ["check", "energy", "bench"]:
    case(f"{command}_config_typo", "cli", r"<CFG>:8:3: unknown key 'temprature' in 'integrator'",
         sub=[(r"  temperature:", "  temprature:")], args=[command, "<CFG>"])
    case(f"{command}_pdb_bad_coordinate", "cli", r"<DIR>/ala2_vacuum.pdb:8:31: expected a number for the x coordinate",
         setup=_set_columns(8, 31, "   1.2.3"), args=[command, "<CFG>"])
    case(f"{command}_ff_negative_mass", "cli", r"<DIR>/ff.xml:3: atom type 'tip3p-O' has mass -15.99943 amu",
         base="h2o", edit={FF: [(r'mass="15.99943"', 'mass="-15.99943"')]}, args=[command, "<CFG>"])
case("resume_with_config_error", "cli", r"<CFG>:8:3: unknown key 'temprature' in 'integrator'", base="vac_done",
     sub=[(r"  temperature:", "  temprature:")], args=RESUME)
case("resume_with_bad_pdb", "cli", r"<DIR>/ala2_vacuum.pdb:8:31: expected a number for the x coordinate",
     base="vac_done", setup=_set_columns(8, 31, "   1.2.3"), args=RESUME)

# ================================================================== mdsim prepare (docs/prepare.md): nothing is written

def _with_ligand(folder):
    with open(os.path.join(folder, "ala2_vacuum.pdb")) as f:
        text = f.read()
    ligand = "HETATM 9999  C1  LIG A 401       9.000   9.000   9.000  1.00  0.00           C  \n"
    end = text.index("END")
    with open(os.path.join(folder, "lig.pdb"), "w") as f:
        f.write(text[:end] + ligand + text[end:])


case("prepare_missing_input", "prepare", r"^error: <DIR>/absent.pdb: cannot open the structure file",
     args=["prepare", "<DIR>/absent.pdb"])
case("prepare_settings_typo", "prepare", r"<DIR>/prepare.yaml:3:3: unknown key 'paddin' in 'prepare' "
     r"\(did you mean 'padding'\?\)", write={"prepare.yaml": "prepare:\n  input: ala2_vacuum.pdb\n  paddin: 1 nm\n"},
     args=["prepare", "<DIR>/prepare.yaml"])
case("prepare_settings_no_section", "prepare", r"<DIR>/prepare.yaml.*no 'prepare:' section",
     write={"prepare.yaml": "system: {pdb: ala2_vacuum.pdb}\n"}, args=["prepare", "<DIR>/prepare.yaml"])
case("prepare_padding_unit", "prepare", r"^error: --padding: unknown length unit 'ps'",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--padding", "1ps"])
case("prepare_variant_no_residue", "prepare", r"variant A:99=HIE: .*ala2_vacuum.pdb has no residue 99 in chain 'A'",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--variant", "A:99=HIE"])
case("prepare_box_too_small", "prepare", r"the cube box is too small for the cutoff 3 nm .*increase padding",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--cutoff", "3nm"])
case("prepare_salt_unreachable", "prepare", r"80 M needs \d+ ions but there are only \d+ waters",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--ionic-strength", "80M"])
case("prepare_unknown_ligand", "prepare", r"no template for residue LIG 401 .*supply its force field XML",
     setup=_with_ligand, args=["prepare", "<DIR>/lig.pdb"], may_change=["lig.pdb"])

# A cut of DHFR (ALA 84, CYS 85, GLY 86; heavy atoms): a cysteine with no other cysteine near it.
CYS_PDB = """\
ATOM   1317  N   ALA    84      49.200  26.815  36.101  1.00  0.00           N
ATOM   1319  CA  ALA    84      49.138  28.080  36.813  1.00  0.00           C
ATOM   1321  CB  ALA    84      49.224  29.224  35.793  1.00  0.00           C
ATOM   1325  C   ALA    84      47.955  28.283  37.849  1.00  0.00           C
ATOM   1326  O   ALA    84      47.991  29.181  38.700  1.00  0.00           O
ATOM   1327  N   CYS    85      46.922  27.435  37.892  1.00  0.00           N
ATOM   1329  CA  CYS    85      45.965  27.277  39.063  1.00  0.00           C
ATOM   1331  CB  CYS    85      44.762  26.418  38.647  1.00  0.00           C
ATOM   1334  SG  CYS    85      44.071  26.899  37.023  1.00  0.00           S
ATOM   1336  C   CYS    85      46.583  26.618  40.247  1.00  0.00           C
ATOM   1337  O   CYS    85      46.113  26.934  41.358  1.00  0.00           O
ATOM   1338  N   GLY    86      47.624  25.803  40.108  1.00  0.00           N
ATOM   1340  CA  GLY    86      48.224  25.055  41.229  1.00  0.00           C
ATOM   1343  C   GLY    86      47.314  23.970  41.767  1.00  0.00           C
ATOM   1344  O   GLY    86      46.375  23.526  41.068  1.00  0.00           O
END
"""
# One alanine as its own chain: no amber14 template is N- and C-terminal at once.
LONE_PDB = """\
ATOM      1  N   ALA B   1       3.555   3.970   0.000  1.00  0.00           N
ATOM      2  CA  ALA B   1       4.853   4.614   0.000  1.00  0.00           C
ATOM      3  CB  ALA B   1       5.661   4.221  -1.232  1.00  0.00           C
ATOM      4  C   ALA B   1       4.713   6.129   0.000  1.00  0.00           C
ATOM      5  O   ALA B   1       3.601   6.653   0.000  1.00  0.00           O
END
"""
KEEP_FIX = (r"the keep list names the heterogens --remove-heterogens leaves in place; add --remove-heterogens, or leave "
            r"out --keep-heterogens$")

case("prepare_input_is_folder", "prepare", r"^error: <DIR>/structure.pdb: is a folder; give a .pdb or .cif file \(PDB "
     r"or PDBx/mmCIF, optionally .gz\)$", mkdir=["structure.pdb"], args=["prepare", "<DIR>/structure.pdb"])
case("prepare_settings_input_is_folder", "prepare", r"^error: <DIR>/raw: is a folder; give a .pdb or .cif file",
     mkdir=["raw"], write={"prepare.yaml": "prepare:\n  input: raw\n"}, args=["prepare", "<DIR>/prepare.yaml"])
case("prepare_variant_cyx_without_partner", "prepare", r"^error: <DIR>/cys.pdb:6: variant CYX given for residue CYS 85 "
     r"\(chain ' '\), but its SG has no disulfide partner: CYX needs its SG bonded to another cysteine's SG, within "
     r"0.3 nm \(the structure has no other cysteine\); give CYS \(or no variant\) for this residue, or check the "
     r"partner's coordinates$", write={"cys.pdb": CYS_PDB}, args=["prepare", "<DIR>/cys.pdb", "--variant", ":85=CYX"])
case("prepare_lone_amino_acid", "prepare", r"^error: <DIR>/lone.pdb:1: residue ALA 1 \(chain 'B'\) is a lone amino "
     r"acid: bonded to no other residue, it is both N- and C-terminal at once, and the force field has no template "
     r"for such a residue; remove it, or cap it \(ACE and NME\) or join it to the chain it belongs to$",
     write={"lone.pdb": LONE_PDB}, args=["prepare", "<DIR>/lone.pdb"])
case("prepare_keep_heterogens_without_remove", "prepare", r"^error: --keep-heterogens ACE,NME given without "
     r"--remove-heterogens: " + KEEP_FIX, args=["prepare", "<DIR>/ala2_vacuum.pdb", "--keep-heterogens", "ace,NME"])
case("prepare_settings_keep_heterogens_without_remove", "prepare", r"^error: <DIR>/prepare.yaml:3:20: "
     r"'prepare.keep_heterogens' \(ACE\) given without 'prepare.remove_heterogens: true' \(--remove-heterogens\): the "
     r"keep list names the heterogens remove_heterogens leaves in place; add it, or leave out the keep list$",
     write={"prepare.yaml": "prepare:\n  input: ala2_vacuum.pdb\n  keep_heterogens: [ACE]\n"},
     args=["prepare", "<DIR>/prepare.yaml"])
case("prepare_keep_heterogens_unknown_name", "prepare", r"^error: --keep-heterogens NAG: <DIR>/ala2_vacuum.pdb has no "
     r"heterogen named NAG \(its heterogens: ACE 1, NME 1\); --remove-heterogens keeps standard residues and water "
     r"anyway, and the keep list names heterogens to keep besides them \(residue names as in the file\)$",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--remove-heterogens", "--keep-heterogens", "NAG"])
case("prepare_keep_heterogens_bad_name", "prepare", r"^error: --keep-heterogens: expected residue names separated by "
     r"commas \(NAG,HEM; each 1 to 5 letters or digits\), got 'AC E'$",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--remove-heterogens", "--keep-heterogens", "AC E"])
case("prepare_settings_remove_heterogens_not_boolean", "prepare", r"^error: <DIR>/prepare.yaml:3:22: "
     r"'prepare.remove_heterogens': expected true or false, got 'water'$",
     write={"prepare.yaml": "prepare:\n  input: ala2_vacuum.pdb\n  remove_heterogens: water\n"},
     args=["prepare", "<DIR>/prepare.yaml"])

# ================================================================== outputs never clobber inputs or each other

PREP = ["prepare", "<DIR>/ala2_vacuum.pdb", "--no-solvent"]
case("prepare_output_is_input", "prepare", r"^error: the prepared structure \(--output\) '<DIR>/ala2_vacuum.pdb' is "
     r"the input structure '<DIR>/ala2_vacuum.pdb': writing it would overwrite that file",
     args=PREP + ["-o", "<DIR>/ala2_vacuum.pdb"])
case("prepare_output_dotdot_is_input", "prepare", r"the prepared structure \(--output\) '<DIR>/sub/../ala2_vacuum.pdb' "
     r"is the input structure", mkdir=["sub"], args=PREP + ["-o", "<DIR>/sub/../ala2_vacuum.pdb"])
case("prepare_output_link_to_input", "prepare", r"the prepared structure \(--output\) '<DIR>/link.pdb' is the input "
     r"structure", symlink={"link.pdb": "ala2_vacuum.pdb"}, args=PREP + ["-o", "<DIR>/link.pdb"])
case("prepare_config_is_input", "prepare", r"the run config \(--config\) '<DIR>/ala2_vacuum.pdb' is the input "
     r"structure", args=PREP + ["--config", "<DIR>/ala2_vacuum.pdb"])
case("prepare_config_is_output", "prepare", r"the run config \(--config\) '<DIR>/out.pdb' and the prepared structure "
     r"\(--output\) '<DIR>/out.pdb' are the same file", args=PREP + ["-o", "<DIR>/out.pdb", "--config", "<DIR>/out.pdb"])
case("prepare_config_is_settings", "prepare", r"the run config \(--config\) '<DIR>/prep.yaml' is the settings file "
     r"'<DIR>/prep.yaml'", write={"prep.yaml": "prepare:\n  input: ala2_vacuum.pdb\n  solvent: false\n  config: prep.yaml\n"},
     args=["prepare", "<DIR>/prep.yaml"])
case("prepare_config_folder_missing", "prepare", r"^error: --config <DIR>/nodir/run.yaml: the folder <DIR>/nodir does not "
     r"exist", args=PREP + ["--config", "<DIR>/nodir/run.yaml"])
case("run_final_pdb_is_structure", "output", r"<CFG>:\d+:\d+: output.final_pdb '.*ala2_vacuum.pdb' is the structure "
     r"\(system.pdb\)", sub=[(r"final_pdb: final.pdb", "final_pdb: ../ala2_vacuum.pdb")])
case("run_state_is_config", "output", r"<CFG>:\d+:\d+: output.state.file '.*config.yaml' is the config",
     sub=[(r"state: \{interval: 5\}", "state: {file: ../config.yaml, interval: 5}")])
case("replicas_log_is_config", "output", r"<CFG>:19:\d+: replicas.log '.*out/\.\./config.yaml' is the config", sub=NO_T,
     append=LADDER.replace("}", ", log: ../config.yaml}"))
case("replicas_log_folder_missing", "output", r"<CFG>:19:\d+: replicas.log: the folder .*out/sub does not exist", sub=NO_T,
     append=LADDER.replace("}", ", log: sub/x.csv}"))

# ================================================================== sizes, ranges and conflicting options

case("prepare_padding_huge", "prepare", r"^error: solvent: the box \(2e\+06 x 2e\+06 x 2e\+06 nm, 8e\+18 nm\^3\) would hold "
     r"about 2.67e\+20 waters, .* more than the 25 million atoms mdsim prepare builds; give a smaller padding",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--padding", "1e6"])
case("prepare_box_huge", "prepare", r"would hold about 3.34e\+16 waters.*give smaller box edges",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--box", "1e5,1e5,1e5"])
case("prepare_settings_padding_angstrom_huge", "prepare", r"more than the 25 million atoms",
     write={"prepare.yaml": "prepare:\n  input: ala2_vacuum.pdb\n  padding: 1e4 Å\n"}, args=["prepare", "<DIR>/prepare.yaml"])
case("prepare_ionic_strength_huge", "prepare", r"^error: ions: 1e\+09 M needs \d{8,} ions but there are only \d+ waters",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--ionic-strength", "1e9"])
case("prepare_box_and_padding", "prepare", r"^error: --box and --padding both given",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--box", "5,5,5", "--padding", "1nm"])
case("prepare_box_and_shape", "prepare", r"^error: --box and --box-shape octahedron both given",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--box", "5,5,5", "--box-shape", "octahedron"])
case("prepare_settings_box_and_shape", "prepare", r"<DIR>/prepare.yaml:4:14: 'prepare.box_shape' and 'prepare.box' both "
     r"given", write={"prepare.yaml": "prepare:\n  input: ala2_vacuum.pdb\n  box: [5, 5, 5]\n  box_shape: octahedron\n"},
     args=["prepare", "<DIR>/prepare.yaml"])
case("prepare_two_variants", "prepare", r"^error: --variant: residue A:2 is given two variants \(ALA and CYX\)",
     args=["prepare", "<DIR>/ala2_vacuum.pdb", "--variant", "A:2=ALA", "--variant", "A:2=CYX"])
case("prepare_nvt_time_not_whole_steps", "prepare", r"^error: --nvt-time: 0.003 ps is not a whole number of the "
     r"protocol's 2 fs steps: e.g. 0.004 ps", args=PREP + ["--config", "<DIR>/run.yaml", "--nvt-time", "0.003"])
case("prepare_seed_too_large", "prepare", r"^error: --seed: expected a whole number from 0 to 18446744073709551615, got "
     r"'99999999999999999999999'", args=PREP + ["--seed", "99999999999999999999999"])
case("config_seed_too_large", "config", r"<CFG>:\d+:\d+: 'seed' must be a non-negative whole number",
     sub=[(r"  timestep: 2 fs\n", "  timestep: 2 fs\n  seed: 99999999999999999999999\n")])
case("stages_restraint_too_stiff", "config", r"<CFG>:19:\d+: stages\[1\].restraints.k \(1e\+30 kJ/mol/nm\^2\) is too "
     r"stiff for the stage's 2 fs step: on atom \d+ \(1.008 amu\)", sub=NO_RUN,
     append="stages:\n  - {steps: 5, restraints: {atoms: protein, k: 1e30}}\n")
case("stages_restraint_atom_twice", "config", r"<CFG>:19:\d+: 'atoms' lists atom 1 twice", sub=NO_RUN,
     append="stages:\n  - {steps: 5, restraints: {atoms: [1, 1, 1], k: 100}}\n")

# ================================================================== resume and demux check what they read

case("resume_finished_run_touches_nothing", "cli", r"^$", base="vac_done", args=RESUME, code=0, one_line=False)
case("resume_finished_staged_run_touches_nothing", "cli", r"^$", base="vac_staged_done", args=RESUME, code=0,
     one_line=False)
case("demux_ladder_edited", "cli", r"<DIR>/out/exchange.csv:2: pair 0 was run at 300 K <-> 320 K, but the config's "
     r"ladder has 300 K <-> 330 K there: the config's replicas.temperatures changed since the run",
     base="vac_ladder_done", sub=[(r"320 K", "330 K")], args=["demux", "<CFG>"])
case("demux_state_line_cut", "cli", r"out/replica_01/state.csv:\d+: the line (has \d+ cells, the header \d+|has no "
     r"newline at its end): a line cut short", base="vac_ladder_done", setup=truncate("out/replica_01/state.csv", 0.8),
     args=["demux", "<CFG>"])

# ================================================================== a serialized OpenMM System (system.topology)

SYSXML = "ala2_vacuum.system.xml"
case("sysxml_unsupported_force", "sysxml", r"^error: <DIR>/ala2_vacuum.system.xml:275: force 5 \(AndersenThermostat\) is "
     r"not supported yet: the thermostat is the config's integrator", base="sysxml",
     edit={SYSXML: [(r"^\t</Forces>", "\t\t<Force type=\"AndersenThermostat\" version=\"1\"/>\n"
                                      "\t</Forces>")]})
case("sysxml_virtual_site_with_mass", "sysxml", r"^error: <DIR>/ala2_vacuum.system.xml:\d+(:\d+)?: virtual site 21 "
     r"has mass 1.008 amu; a virtual site must have mass 0", base="sysxml",
     edit={SYSXML: [(r"\t\t<Particle mass=\"1.008\"/>\n\t</Particles>",
                     "\t\t<Particle mass=\"1.008\">\n\t\t\t<TwoParticleAverageSite p1=\"18\" p2=\"20\" w1=\".5\" "
                     "w2=\".5\"/>\n\t\t</Particle>\n\t</Particles>")]})
case("sysxml_damaged_xml", "sysxml", r"^error: <DIR>/ala2_vacuum.system.xml:16:3: malformed XML: not well-formed",
     base="sysxml", lines={SYSXML: {15: '\t\t<Particle mass="14.01"'}})
case("sysxml_truncated_xml", "sysxml", r"^error: <DIR>/ala2_vacuum.system.xml:158:5: malformed XML: unclosed token",
     base="sysxml", setup=truncate(SYSXML, 0.5))
case("sysxml_atom_count_mismatch", "sysxml", r"^error: <CFG>:3:3: <DIR>/ala2_vacuum.pdb has 21 atoms, but the System "
     r"in <DIR>/ala2_vacuum.system.xml has 22 particles: the coordinates and the System must describe the same "
     r"atoms in the same order", base="sysxml", lines={"ala2_vacuum.pdb": {6: None}})
case("sysxml_contradicting_method", "sysxml", r"^error: <CFG>:4:21: 'nonbonded_method' is pme, but the System in "
     r"<DIR>/ala2_vacuum.system.xml has no_cutoff \(force 2, NonbondedForce, line 99\): a serialized System's own "
     r"settings hold", base="sysxml",
     sub=[(r"  coordinates: ala2_vacuum.pdb\n", "  coordinates: ala2_vacuum.pdb\n  nonbonded_method: pme\n")])
case("sysxml_contradicting_constraints", "sysxml", r"^error: <CFG>:4:16: 'constraints' is hbonds, but the System in "
     r"<DIR>/ala2_vacuum.system.xml has no constraints, which match none", base="sysxml",
     sub=[(r"  coordinates: ala2_vacuum.pdb\n", "  coordinates: ala2_vacuum.pdb\n  constraints: hbonds\n")])
case("sysxml_forcefield_with_topology", "sysxml", r"^error: <CFG>:4:15: 'forcefield' does not go with 'topology'",
     base="sysxml", sub=[(r"  coordinates: ala2_vacuum.pdb\n",
                          "  coordinates: ala2_vacuum.pdb\n  forcefield: [amber14-all.xml]\n")])
case("sysxml_topology_missing", "sysxml", r"^error: <CFG>:2:13: 'topology': file not found: <DIR>/ala2_vacuum.system.xml",
     base="sysxml", remove=[SYSXML])
case("sysxml_named_prmtop", "sysxml", r"^error: <DIR>/ala2_vacuum.prmtop:1: not a new-style AMBER prmtop: no %FLAG "
     r"line before the data", base="sysxml", sub=[(r"ala2_vacuum.system.xml", "ala2_vacuum.prmtop")],
     setup=lambda root: os.rename(os.path.join(root, SYSXML), os.path.join(root, "ala2_vacuum.prmtop")))
case("sysxml_gz_not_gzip", "sysxml", r"^error: <DIR>/ala2_vacuum.system.xml.gz: the name ends in .gz but the file is "
     r"not gzip-compressed", base="sysxml", sub=[(r"ala2_vacuum.system.xml", "ala2_vacuum.system.xml.gz")],
     setup=lambda root: os.rename(os.path.join(root, SYSXML), os.path.join(root, SYSXML + ".gz")))

# ================================================================== topology files: AMBER prmtop and inpcrd (base prmtop)

PRMTOP, INPCRD, CHECK = "peptide.prmtop", "peptide.inpcrd", ["check", "<CFG>"]
case("prmtop_truncated", "prmtop", r"^error: <DIR>/peptide.prmtop:\d+: %FLAG \w+(: has \d+ values, expected| is "
     r"missing).*truncated", base="prmtop", setup=truncate(PRMTOP, 0.5), args=CHECK)
case("prmtop_pointers_natom_mismatch", "prmtop", r"^error: <DIR>/peptide.prmtop:\d+: %FLAG (CHARGE|MASS|ATOM_NAME): "
     r"has 85 values, expected 86 \(NATOM of %FLAG POINTERS\)", base="prmtop",
     lines={PRMTOP: {7: "      86      11      56      28      25      17      41      40       0       0"}}, args=CHECK)
case("prmtop_bond_atom_out_of_range", "prmtop", r"^error: <DIR>/peptide.prmtop:214: %FLAG BONDS_INC_HYDROGEN: atom "
     r"pointer 999 is not an atom: expected 3 \(index - 1\) for an atom index 1 to NATOM = 85", base="prmtop",
     lines={PRMTOP: {214: "     999      21       4      18      24       4      12      15       6       0"}},
     args=CHECK)
case("prmtop_lj_ccoef", "prmtop", r"^error: <DIR>/peptide.prmtop:\d+: %FLAG LENNARD_JONES_CCOEF: the 12-6-4 "
     r"Lennard-Jones C coefficients .* are not supported", base="prmtop",
     edit={PRMTOP: [(r"^%FLAG BONDS_INC_HYDROGEN", "%FLAG LENNARD_JONES_CCOEF\n%FORMAT(5E16.8)\n  0.00000000E+00\n"
                                                   "%FLAG BONDS_INC_HYDROGEN")]}, args=CHECK)
case("prmtop_not_a_number", "prmtop", r"^error: <DIR>/peptide.prmtop:7: %FLAG POINTERS: value 2 '1x' is not an "
     r"integer", base="prmtop",
     lines={PRMTOP: {7: "      85      1x      56      28      25      17      41      40       0       0"}}, args=CHECK)
case("inpcrd_atom_count_vs_prmtop", "prmtop", r"^error: <CFG>:3:\d+: <DIR>/alanine.inpcrd has 22 atoms, but the "
     r"System in <DIR>/peptide.prmtop has 85 particles", base="prmtop", sub=[(r"peptide.inpcrd", "alanine.inpcrd")],
     setup=lambda root: _copy(root, os.path.join(DATA_DIR, "..", "amber", "alanine-dipeptide-implicit.inpcrd"),
                              "alanine.inpcrd"), args=CHECK)
case("inpcrd_bad_number", "prmtop", r"^error: <DIR>/peptide.inpcrd:3:13: expected positions \(Å\) as 6 numbers of 12 "
     r"columns each \(6F12.7\), found '   9.4x14116'", base="prmtop",
     lines={INPCRD: {3: "   6.1027258   9.4x14116   5.1039335   6.5815895  10.1277022   5.6290157"}}, args=CHECK)
case("inpcrd_truncated", "prmtop", r"^error: <DIR>/peptide.inpcrd:\d+: has \d+ lines, which does not fit 85 atoms",
     base="prmtop", lines={INPCRD: {20: None, 21: None}}, args=CHECK)

# ================================================================== topology files: GROMACS top and gro (base gmx)

TOP, GRO = "bnz.top", "bnz.gro"
case("top_unknown_atom_type", "top", r"^error: <DIR>/bnz.top:61: \[ atoms \]: unknown atom type \"CG2R99\"; define it in "
     r"\[ atomtypes \]",
     base="gmx", lines={TOP: {61: "     1     CG2R99      1   BENX     CG      1     -0.115     12.011"}}, args=CHECK)
case("top_missing_dihedral_parameters", "top", r"^error: <DIR>/bnz.top:139: no parameters for the dihedral 5-1-3-7: \[ dihedraltypes \] has no line for the types "
     r"CG2R61 CG2R61 CG2R61 CG2R61 \(function 9\)",
     base="gmx", lines={TOP: {46: None}}, args=CHECK)
case("top_include_not_found", "top", r"^error: <DIR>/bnz.top:19: #include \"nothere.itp\": file not found; searched "
     r"<DIR>, <DIR>/inc", base="gmx", lines={TOP: {19: '#include "nothere.itp"'}}, mkdir=["inc"],
     sub=[(r"  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  include_dirs: [inc]\n")],
     args=CHECK)
case("top_bad_bond_function", "top", r"^error: <DIR>/bnz.top:77: .*(function|funct).*7", base="gmx",
     lines={TOP: {77: "    1     2     7 "}}, args=CHECK)
case("top_undefined_molecule", "top", r"^error: <DIR>/bnz.top:173: \[ molecules \]: molecule type \"BENZ\" is not "
     r"defined \(defined: BENX\)", base="gmx", lines={TOP: {173: "BENZ     2"}}, args=CHECK)
# More atoms than the coordinates: refused at the [molecules] line before the System is built; fewer: by the count check.
case("top_molecules_count_over_gro", "top", r"^error: <DIR>/bnz.top:173: \[ molecules \]: 3 BENX make at least 39 "
     r"atoms, but the coordinates have 26", base="gmx", lines={TOP: {173: "BENX     3"}}, args=CHECK)
case("top_molecules_count_under_gro", "top", r"(^|\n)error: <CFG>:3:\d+: <DIR>/bnz.gro has 26 atoms, but the System in "
     r"<DIR>/bnz.top has 13 particles", base="gmx", lines={TOP: {173: "BENX     1"}}, args=CHECK)
case("gro_short_line", "top", r"^error: <DIR>/bnz.gro:5:\d+: .*(ends before|expected x, y, z)", base="gmx",
     lines={GRO: {5: "    1BEN    CD1    3   0.004"}}, args=CHECK)
case("gro_bad_box", "top", r"^error: <DIR>/bnz.gro:29: box line with 2 numbers; expected 3", base="gmx",
     lines={GRO: {29: "   3.00000   3.00000"}}, args=CHECK)
case("gro_atoms_missing", "top", r"^error: <DIR>/bnz.gro:\d+: the file ends after \d+ of 27 atom lines",
     base="gmx", lines={GRO: {2: "   27"}}, args=CHECK)

# ================================================================== topology files: CHARMM psf, parameters, crd (base psf)

PSF, PRM, CRD = "wm.psf", "wm.prm", "wm.crd"
case("psf_unknown_atom_type", "psf", r"^error: <DIR>/wm.psf:8: atom type Qw of atom 2 \(O of SPCE 1, segment S\) is "
     r"not defined by a MASS line in <DIR>/wm.prm: add the topology \(.rtf\), parameter or stream file", base="psf",
     lines={PSF: {8: "       2 S    1    SPCE O    Qw    -0.847600       15.9990           0        0.0000        0.0000"}},
     args=CHECK)
case("psf_missing_bond_parameters", "psf", r"^error: <DIR>/wm.psf:18: no bond parameters for types HW - OW \(atom 1 "
     r"\(H of SPCE 1, segment S\), atom 2 \(O of SPCE 1, segment S\)\) in <DIR>/wm.prm: add the parameter or stream "
     r"file that defines them to system.parameters", base="psf", lines={PRM: {13: None}}, args=CHECK)
case("psf_missing_dihedral_parameters", "psf", r"^error: <DIR>/wm.psf:27: no dihedral parameters for types HO - OH - "
     r"CTO - H1O", base="psf", lines={PRM: {25: None}}, args=CHECK)
case("psf_natom_mismatch", "psf", r"^error: <DIR>/wm.psf:6: !NATOM says 10 atoms, but the section has 9 lines",
     base="psf", lines={PSF: {6: "      10 !NATOM"}}, args=CHECK)
case("psf_bond_index_out_of_range", "psf", r"^error: <DIR>/wm.psf:19: !NBOND entry 6: atom 99 is out of range "
     r"\(1 to 9\)", base="psf", lines={PSF: {19: "       4       7       4      99       8       9"}}, args=CHECK)
case("psf_bond_count_mismatch", "psf", r"^error: <DIR>/wm.psf:17: !NBOND says 8 entries of 2 atoms, but the section "
     r"has 14 indices", base="psf", lines={PSF: {17: "       8 !NBOND: bonds"}}, args=CHECK)
case("psf_not_a_psf", "psf", r"^error: <DIR>/wm.psf:1: not a PSF file: the first line must start with 'PSF'",
     base="psf", lines={PSF: {1: "PDB"}}, args=CHECK)
case("psf_bad_charge", "psf", r"^error: <DIR>/wm.psf:7: expected the charge \(e\) \(a number\), found '0.42x'",
     base="psf", lines={PSF: {7: "       1 S    1    SPCE H    Hw     0.42x        1.0080           0        0.0000        0.0000"}},
     args=CHECK)
case("prm_bad_bond_constant", "psf", r"^error: <DIR>/wm.prm:14: expected the bond force constant as field 3, found "
     r"'339.99x'", base="psf", lines={PRM: {14: "   H1O   CTO   339.99x     1.090000"}}, args=CHECK)
case("prm_nonbonded_undefined_type", "psf", r"^error: <DIR>/wm.prm:\d+: nonbonded values for atom type HO, which no "
     r"MASS line defines", base="psf", lines={PRM: {10: None}}, args=CHECK)
case("crd_truncated", "psf", r"^error: <DIR>/wm.crd:\d+: the file ends after 7 of its 9 atoms", base="psf",
     lines={CRD: {11: None, 12: None}}, args=CHECK)
case("crd_bad_coordinate", "psf", r"^error: <DIR>/wm.crd:5: atom 2: expected x, y and z in Å \(standard format\)",
     base="psf", lines={CRD: {5: "    2    1 SPCE O      0.0x000   0.00000   0.00000 S    1      0.00000"}}, args=CHECK)
case("crd_count_vs_psf", "psf", r"(^|\n)error: <CFG>:3:\d+: <DIR>/wm.crd has 8 atoms, but the System in <DIR>/wm.psf "
     r"has 9 particles", base="psf", lines={CRD: {3: "    8", 12: None}}, args=CHECK)
case("psf_without_parameters", "config", r"^error: <CFG>:2:\d+: a CHARMM psf needs its parameter files: add "
     r"'parameters'", base="psf", sub=[(r"  parameters: \[wm.prm\]\n", "")], args=CHECK)
case("psf_parameters_wrong_extension", "config", r"^error: <CFG>:4:\d+: 'parameters': <DIR>/wm.crd: not a CHARMM "
     r"parameter file name", base="psf", sub=[(r"\[wm.prm\]", "[wm.crd]")], args=CHECK)

# ================================================================== topology files: the config's system keys

case("topology_unknown_extension", "config", r"^error: <CFG>:2:13: 'topology': <DIR>/peptide.parmx: unknown format",
     base="prmtop", sub=[(r"peptide.prmtop", "peptide.parmx")],
     setup=lambda root: os.rename(os.path.join(root, PRMTOP), os.path.join(root, "peptide.parmx")), args=CHECK)
case("topology_include_dirs_with_prmtop", "config", r"^error: <CFG>:\d+:\d+: 'include_dirs' goes with (a )?GROMACS "
     r"(top )?topology, not with", base="prmtop", mkdir=["inc"],
     sub=[(r"  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  include_dirs: [inc]\n")], args=CHECK)
case("topology_box_malformed", "config", r"^error: <CFG>:5:\d+: 'box' must be three edge lengths", base="gmx",
     sub=[(r"  nonbonded_method: no_cutoff\n", "  nonbonded_method: no_cutoff\n  box: [3 nm, 3 nm]\n")], args=CHECK)
case("topology_coordinates_count_mismatch", "config", r"^error: <CFG>:3:\d+: <DIR>/alanine.pdb has 2269 atoms, but "
     r"the System in <DIR>/peptide.prmtop has 85 particles", base="prmtop", sub=[(r"peptide.inpcrd", "alanine.pdb")],
     setup=lambda root: _copy(root, TOPO_DIR.replace("<DATA>", DATA_DIR) + "/alanine-dipeptide-explicit.pdb",
                              "alanine.pdb"), args=CHECK)
