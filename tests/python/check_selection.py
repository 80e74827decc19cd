#!/usr/bin/python3
"""Compare mdsim atom selections with MDTraj's selection language on the same PDB.

    check_selection.py SYSTEM.pdb SELECTIONS.json

SELECTIONS.json maps MDTraj selection expressions to the atom indices mdsim selected for the
equivalent mdsim selection (the C++ test does the translation, e.g. mdsim "heavy" = MDTraj
"not element H"). Run by tests/io/test_atom_selection.cpp through /usr/bin/python3; a missing MDTraj
is an error.
"""
import json
import sys
import warnings

import mdtraj


def main():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        top = mdtraj.load(sys.argv[1]).topology
    expected = json.load(open(sys.argv[2]))
    for expr, ours in expected.items():
        theirs = [int(i) for i in top.select(expr)]
        if theirs != ours:
            only_ours = sorted(set(ours) - set(theirs))[:10]
            only_theirs = sorted(set(theirs) - set(ours))[:10]
            print("FAIL: %r: mdsim %d atoms, MDTraj %d atoms; only mdsim %s, only MDTraj %s"
                  % (expr, len(ours), len(theirs), only_ours, only_theirs), flush=True)
            sys.exit(1)
        print("%-40s %6d atoms, same as MDTraj" % (expr, len(ours)), flush=True)


if __name__ == "__main__":
    main()
