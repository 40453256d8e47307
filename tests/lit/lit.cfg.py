# lit configuration of the tlc test suite. The build-specific paths come from the
# lit.site.cfg.py that CMake writes into <build>/tests/lit/; run lit on that directory:
#
#   python3 /usr/lib/llvm-14/build/utils/lit/lit.py -sv build/tests/lit/parse
#
# Substitutions:  %tlc  the built compiler      FileCheck  FileCheck-14
#                 %python  python3               not  (lit's builtin: inverts the exit code)
#                 %exitcode CMD...  runs CMD, prints its output and then "exit code: N"
import os

import lit.formats

config.name = "tlc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".tl", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]

if not hasattr(config, "tlc"):
    lit_config.fatal("tests/lit/lit.cfg.py was loaded without the lit.site.cfg.py that CMake "
                     "generates; run lit on <build>/tests/lit instead of the source directory")

# tests/check_diag_coverage.py runs a suite with %tlc replaced by itself (in --wrap mode), to
# record the id of every diagnostic tlc prints.
coverage_record = lit_config.params.get("tlc_coverage_record")
if coverage_record:
    script = lit_config.params["tlc_coverage_script"]
    config.substitutions.append(("%tlc", f'"{config.python}" "{script}" --wrap --tlc "{config.tlc}" '
                                         f'--record "{coverage_record}" --'))
else:
    config.substitutions.append(("%tlc", config.tlc))
config.substitutions.append(("%exitcode", f'"{config.python}" "{os.path.join(config.test_source_root, "exitcode.py")}"'))
config.substitutions.append(("%python", config.python))
config.substitutions.append((r"\bFileCheck\b", config.filecheck))

# Tests must not depend on the caller's environment.
config.environment["LC_ALL"] = "C"
for var in ("TERM", "NO_COLOR", "CLICOLOR_FORCE"):
    config.environment.pop(var, None)
