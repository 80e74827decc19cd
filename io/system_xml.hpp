// Serialized OpenMM Systems and States (openmm.XmlSerializer's output; the files OpenMM's own tools write with
// XmlSerializer.serialize(system) and serialize(state)), read into model types. Plain or gzip-compressed (.gz).
//
// A System becomes mdsim's System with the same physics, term for term in OpenMM's order (so a System that
// app.ForceField.createSystem built equals what model/forcefield builds from the same structure and force field):
//   <Particles>                 masses (a massless particle stays fixed, as in OpenMM; a virtual site is refused)
//   <Constraints>               distance constraints; rigid waters found among them (find_rigid_waters), for SETTLE
//   <PeriodicBoxVectors>        the box, for a periodic NonbondedForce (reduced form, as OpenMM requires)
//   HarmonicBondForce, HarmonicAngleForce, PeriodicTorsionForce   the bonded terms (several forces of a type append)
//   NonbondedForce              charges, sigma, epsilon, exceptions; NoCutoff, CutoffNonPeriodic, CutoffPeriodic,
//                               PME (alpha and grid chosen from cutoff and ewaldErrorTolerance as OpenMM does),
//                               cutoff, ewaldErrorTolerance, dispersion correction, switching function,
//                               reaction-field dielectric
//   CMAPTorsionForce            CMAP terms and maps
//   CustomNonbondedForce        only the tabulated LJ (acoef(type1, type2)/bcoef(type1, type2), as CharmmPsfFile,
//                               AmberPrmtopFile, GromacsTopFile and ForceField write it): System::lj_types, checked
//                               against the NonbondedForce (epsilon 0, exclusions = exceptions, same cutoff)
//   CustomTorsionForce          only CHARMM's harmonic improper: HarmonicImproperTerm
//   a second HarmonicBondForce  of 1-3 pairs (CHARMM's Urey-Bradley): System::urey_bradleys, with a note
//   CMMotionRemover             reported with its frequency (the run's remove_cm_motion_interval)
//   MonteCarloBarostat          reported, for the run's barostat (io/config)
// Anything else is an InputError naming the file, the line, the force's index and type (and a custom force's
// expression): other forces, Ewald and LJPME, explicit PME parameters (setPMEParameters), parameter offsets and
// global parameters, periodic exceptions or bonded terms, virtual sites. Force groups are ignored (a note says
// so): mdsim reports energies per term. Units as in the files: nm, ps, kJ/mol, rad, amu, e, bar, K.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/system.hpp"
#include "physics/pbc.hpp"
#include "physics/vec3.hpp"

namespace mdsim {

struct SystemXmlBarostat {  // a MonteCarloBarostat (frequency > 0)
  double pressure_bar = 1.0;
  double temperature_k = 300.0;
  int frequency = 25;
  int index = -1, line = 0;  // its force index and line
};

struct SystemXml {
  std::string source;
  System system;  // the box only when the NonbondedForce is periodic; nonbonded.pme_grid left at its default
  int nonbonded_index = -1, nonbonded_line = 0;  // the NonbondedForce (-1, 0: none)
  bool cm_motion_remover = false;                // a CMMotionRemover with frequency > 0
  int cm_motion_interval = 1;                    // its frequency (steps; the smallest of several)
  std::optional<SystemXmlBarostat> barostat;
  std::vector<std::string> notes;  // what a run should say: force groups ignored, massless particles, ...
};

// Reads a serialized System (plain or gzip). InputError ("file:line: ...") for anything above it cannot represent,
// malformed XML, a root other than <System>, missing or bad attributes, particle indices out of range.
SystemXml read_system_xml(const std::string& path);
SystemXml parse_system_xml(const std::string& text, const std::string& source);  // from text (tests, fuzzing)

struct StateXml {
  std::string source;
  std::vector<Vec3d> positions_nm;
  std::vector<Vec3d> velocities_nm_per_ps;  // empty when the State holds none
  std::optional<Boxd> box;                  // its periodic box vectors, when written (reduced form)
  double time_ps = 0.0;
};

// Reads a serialized State (plain or gzip): positions (required), velocities, box, time. InputError as above.
StateXml read_state_xml(const std::string& path);
StateXml parse_state_xml(const std::string& text, const std::string& source);

// True for names read as OpenMM XML: .xml and .xml.gz, any case.
bool is_openmm_xml_path(const std::string& path);

}  // namespace mdsim
