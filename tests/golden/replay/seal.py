#!/usr/bin/python3
"""seal.py DIR...: records a fingerprint in DIR/case.json, as attnprop writes it.

The golden replay folders are made by hand (each has one defect that `attnprop replay` must
refuse with exit 2, or a verdict it must compare), and a hand-made folder has no fingerprint:
replay would refuse it as edited before it looks at the defect. This tool seals them the way
src/report/case_record.cpp does (docs/reports.md, "Fingerprint"): the SHA-256 of the model
file's bytes, and of the compact JSON of case.json without its "fingerprint" and "provenance"
members, members in file order. Python's compact JSON equals attnprop's for the plain ASCII
content of these folders. Usage: /usr/bin/python3 tests/golden/replay/seal.py tests/golden/replay/*/
"""
import collections
import hashlib
import json
import sys


def seal(folder):
    path = folder.rstrip('/') + '/case.json'
    with open(path, encoding='utf-8') as f:
        doc = json.load(f, object_pairs_hook=collections.OrderedDict)
    doc.pop('fingerprint', None)
    fields = collections.OrderedDict((k, v) for k, v in doc.items() if k != 'provenance')
    case = hashlib.sha256(json.dumps(fields, separators=(',', ':'), ensure_ascii=False).encode()).hexdigest()
    with open(folder.rstrip('/') + '/' + doc['model'], 'rb') as f:
        model = hashlib.sha256(f.read()).hexdigest()
    doc['fingerprint'] = collections.OrderedDict([('algorithm', 'sha256'), ('model', model), ('case', case)])
    with open(path, 'w', encoding='utf-8') as f:
        f.write(json.dumps(doc, indent=2, ensure_ascii=False) + '\n')


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        seal(d)
