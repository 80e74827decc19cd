#!/usr/bin/python3
"""The CHARMM case of the shared topology references (shared/topologies, charmm_ala3_solv) as a serialized OpenMM
System, for the System XML reader's test of CHARMM's forces (tests/io/test_system_xml_charmm.cpp): OpenMM 7.7's
CharmmPsfFile.createSystem with the settings of reference/charmm_ala3_solv.json (PME 1.0 nm, Ewald tolerance 5e-4,
no constraints, flexible water, box 3.271195 x 3.299596 x 3.300715 nm; the NonbondedForce's dispersion correction and
the NBFIX CustomNonbondedForce's long-range correction off, as createSystem leaves them here). The System holds
CMAPTorsionForce, the Urey-Bradley HarmonicBondForce (group 3), the harmonic-improper CustomTorsionForce and the
tabulated LJ CustomNonbondedForce ((a/r6)^2-b/r6 with acoef = sqrt(c12)). The reference energies and forces are
those of reference/charmm_ala3_solv.{json,h5}.

Writes system_xml_charmm_ala3.system.xml.gz (gzip, mtime 0: reproducible) beside this script.
Regenerate with:  /usr/bin/python3 tests/data/make_system_xml_charmm.py
"""
import gzip
import json
import os

import openmm as mm
from openmm import app, unit

HERE = os.path.dirname(os.path.abspath(__file__))
TOPOLOGIES = os.path.join(HERE, 'shared', 'topologies')
INPUTS = os.path.join(TOPOLOGIES, 'inputs')


def main():
    with open(os.path.join(TOPOLOGIES, 'reference', 'charmm_ala3_solv.json')) as f:
        ref = json.load(f)
    settings = ref['settings']
    assert settings['nonbonded_method'] == 'PME' and settings['constraints'] == 'none'
    psf = app.CharmmPsfFile(os.path.join(INPUTS, 'ala3_solv.psf'))
    params = app.CharmmParameterSet(os.path.join(INPUTS, 'par_all36_prot.prm'),
                                    os.path.join(INPUTS, 'toppar_water_ions.str'))
    box = ref['box_nm']
    psf.setBox(box[0][0] * unit.nanometer, box[1][1] * unit.nanometer, box[2][2] * unit.nanometer)
    system = psf.createSystem(params, nonbondedMethod=app.PME,
                              nonbondedCutoff=settings['cutoff_nm'] * unit.nanometer,
                              ewaldErrorTolerance=settings['ewald_error_tolerance'], constraints=None,
                              rigidWater=settings['rigid_water'], removeCMMotion=settings['remove_cm_motion'])
    for force in system.getForces():
        if isinstance(force, mm.NonbondedForce):
            assert force.getUseDispersionCorrection() == settings['dispersion_correction']
        if isinstance(force, mm.CustomNonbondedForce):
            assert [force.getUseLongRangeCorrection()] == settings['custom_nonbonded_long_range_correction']
    text = mm.XmlSerializer.serialize(system).encode()
    with open(os.path.join(HERE, 'system_xml_charmm_ala3.system.xml.gz'), 'wb') as out:
        with gzip.GzipFile(fileobj=out, mode='wb', filename='', mtime=0) as z:
            z.write(text)


if __name__ == '__main__':
    main()
