# mgopt — build, test and demo. Needs only a C compiler and make (GNU make).
#
#   make                  regenerate mgopt.h / mgopt_passes.h from src/ and build build/mgopt
#   make test             build and run every test: unit tests, compile tests, examples, and
#                         whatever TEST_PROGS / TEST_CMDS list (fuzz replays, golden tests)
#   make demo             optimize examples/demo.onnx and print the before/after table
#   make check-amalgamation   fail when the generated headers are stale
#   make pass-table       print the README's pass table from `mgopt --list-passes`
#   make check-sources    every src/ file compiles alone; no dead private function
#   make clang-test       `make test` with clang into build-clang/
#   make asan-test        `make test` with ASan+UBSan (clang when available) into build-asan/
#   make compile-tests    only the compile tests (see tests/compile/README)
#   make test-cross ARCH=s390x|aarch64   unit and golden tests cross-compiled, run under qemu-user
#   make install PREFIX=/usr/local [DESTDIR=...]   headers, tool, mgopt.pc, CMake package;
#                         make uninstall removes them; make test-install checks both ways
#
# Variables: CC, CXX, CFLAGS, WERROR=1 (adds -Werror), SAN=1 (ASan+UBSan),
# B=<dir> (build directory; derived from SAN and CC when not given).
# Each build directory remembers its compiler and flags (B/.config) and rebuilds
# everything when they change, so configurations never mix objects.

CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Wpedantic
CXXWARN := -std=c++11 -Wall -Wextra -Wpedantic
LDLIBS  := -lm

# clang in CC implies clang++ unless CXX was given.
ifneq ($(findstring clang,$(CC)),)
ifeq ($(origin CXX),default)
CXX := clang++
endif
endif
CLANG   ?= clang
CLANGXX ?= clang++

ifeq ($(SAN),1)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
export UBSAN_OPTIONS ?= print_stacktrace=1

# -O0: the sanitizers see as much, and the amalgamation compiles ~8x faster than at -O1
ifeq ($(origin CFLAGS),file)
CFLAGS := -O0 -g
endif
endif
# ASan at -O0 about doubles stack frames; the recursion limits are sized for
# normal builds (the ONNX writer's 4096-level check needs ~10 MB here, <1 MB at -O2).
ifneq ($(findstring -fsanitize=address,$(CFLAGS) $(SANFLAGS)),)
SAN_STACK := ulimit -s 16384 2>/dev/null || true;
endif
ifeq ($(WERROR),1)
WARN    += -Werror
CXXWARN += -Werror
endif

ifeq ($(SAN),1)
B ?= build-asan
else ifneq ($(findstring clang,$(CC)),)
B ?= build-clang
else
B ?= build
endif

ALL_CFLAGS   := $(CFLAGS) $(SANFLAGS) $(WARN) -I.
ALL_CXXFLAGS := $(CFLAGS) $(SANFLAGS) $(CXXWARN) -I.
ALL_LDFLAGS  := $(CFLAGS) $(LDFLAGS) $(SANFLAGS)  # CFLAGS too: -fsanitize given there must link

# The header generator is a host tool shared by every build directory.
HOSTCC ?= $(CC)
AMALG  := build/amalgamate

HDR := mgopt.h mgopt_passes.h

.PHONY: all amalgamate check-amalgamation check-models test demo clean clean-all clang-test asan-test test-valgrind \
        compile-tests examples run-examples FORCE

all: $(B)/mgopt

# ---------------------------------------------------------------- configuration stamp

CONFIG := CC=$(CC) CXX=$(CXX) CLANG=$(CLANG) CLANGXX=$(CLANGXX) CFLAGS=$(ALL_CFLAGS) CXXFLAGS=$(ALL_CXXFLAGS) LDFLAGS=$(ALL_LDFLAGS)
FORCE:
$(B)/.config: FORCE
	@mkdir -p $(B)
	@printf '%s\n' '$(CONFIG)' | cmp -s - $@ || printf '%s\n' '$(CONFIG)' > $@

# ---------------------------------------------------------------- headers

$(AMALG): tools/amalgamate.c
	@mkdir -p $(dir $@)
	$(HOSTCC) -O1 -g -std=c99 -Wall -Wextra -o $@ $<

# Regenerates the two committed headers from src/.
amalgamate: $(AMALG)
	$(AMALG) src .

# Every make regenerates the headers into build/gen (milliseconds) and copies
# those whose content changed, so a header checked out with a fresh mtime
# (e.g. after `git checkout -- mgopt.h`) never hides a change in src/, and an
# unchanged header keeps its mtime (nothing rebuilds).
# One recipe makes both (a grouped target), so make re-reads both timestamps
# after it runs and rebuilds what includes either.
mgopt.h mgopt_passes.h &: $(AMALG) FORCE
	@mkdir -p build/gen
	@$(AMALG) src build/gen
	@for h in mgopt.h mgopt_passes.h; do \
	  cmp -s build/gen/$$h $$h || { cp build/gen/$$h $$h && echo "regenerated $$h from src/"; }; done

# Fails when mgopt.h / mgopt_passes.h differ from what src/ generates.
check-amalgamation: $(AMALG)
	$(AMALG) src . --check

# Every file of src/ compiles alone with $(CC), as its own translation unit
# (MGOPT__PRIVATE empty: cross-file internals are then extern declarations),
# so each file includes what it uses. A header is compiled through a one-line
# unit that includes it (a declaration follows, for headers that only define
# macros). Then the whole implementation with MGOPT__PRIVATE plain `static`
# (no `unused` attribute) and -Wunused-function: a private function nothing
# calls is an error.
SRC_FILES := $(sort $(shell find src -name '*.c' -o -name '*.h'))
SRC_CHECK := $(CC) -std=c99 -Wall -Wextra -Wpedantic -Werror -fsyntax-only
.PHONY: check-sources
check-sources: $(HDR)
	@bad=0; for f in $(SRC_FILES); do \
	  case $$f in \
	    *.h) printf '#include "%s"\ntypedef int mgopt__check_sources_unit;\n' "$(CURDIR)/$$f" | \
	           $(SRC_CHECK) -DMGOPT__PRIVATE= -x c - ;; \
	    *)   $(SRC_CHECK) -DMGOPT__PRIVATE= -x c $$f ;; \
	  esac || { echo "check-sources: $$f does not compile alone"; bad=$$((bad+1)); }; \
	done; \
	$(CC) -std=c99 -Wall -Wextra -Wpedantic -Werror -O0 -c -o /dev/null -DMGOPT__PRIVATE=static -Wunused-function -I. tests/compile/impl_only.c || \
	  { echo "check-sources: the implementation has dead private code"; bad=$$((bad+1)); }; \
	if [ $$bad -ne 0 ]; then echo "check-sources: $$bad failed"; exit 1; fi; \
	echo "check-sources: $(words $(SRC_FILES)) files compile alone; no dead private code"

# ---------------------------------------------------------------- the tool

$(B)/mgopt: tools/mgopt.c tools/keep_memory.h $(HDR) $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ tools/mgopt.c $(ALL_LDFLAGS) $(LDLIBS)

# examples/demo.onnx is written by mgopt itself from examples/demo.mil
# (`make demo-model`); the demo optimizes it and prints the before/after table.
demo: $(B)/mgopt
	$(B)/mgopt examples/demo.onnx -o $(B)/demo_out.onnx -p default --stats

demo-model: $(B)/mgopt
	$(B)/mgopt examples/demo.mil -o examples/demo.onnx -p none

# Real models and ONNX's conformance suite under ONNX Runtime (needs node + npm; not in CI).
check-models: $(B)/mgopt
	bash tools/check_models.sh

clean:
	rm -rf $(B)

clean-all:
	rm -rf build build-clang build-asan build-cmake build-s390x build-aarch64

# ---------------------------------------------------------------- test hooks
#
# Other parts of the build append to these (see the marked section at the end):
#   TEST_PROGS  programs `make test` builds (by a rule of this Makefile) and runs
#               without arguments; the last line of their output must be
#               "N passed, N failed".
#   TEST_CMDS   extra command lines `make test` runs, one per quoted word
#               (e.g. TEST_CMDS += '$(B)/fuzz/replay_mil tests/fuzz/corpus/mil'),
#               same output convention; list their programs in TEST_DEPS.
#   TEST_DEPS   further prerequisites of `make test`.
TEST_PROGS :=
TEST_CMDS  :=
TEST_DEPS  :=

# ---------------------------------------------------------------- unit tests

# A test that uses only the public API does not define MGOPT_IMPLEMENTATION:
# it links the implementation compiled once per build directory ($(IMPL_OBJ)),
# so the library is not compiled again for each such program. A test of
# private functions (mgopt__*) defines it and compiles the library itself.
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
UNIT_OWN_IMPL := $(patsubst tests/unit/%.c,$(B)/tests/%,$(shell grep -l '^\#define MGOPT_IMPLEMENTATION' $(UNIT_SRC)))
UNIT_LINKED := $(filter-out $(UNIT_OWN_IMPL),$(UNIT_BIN))
IMPL_OBJ := $(B)/compile/impl_c99.o

$(UNIT_OWN_IMPL): $(B)/tests/%: tests/unit/%.c tests/unit/harness.h $(HDR) $(B)/.config
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
$(UNIT_LINKED): $(B)/tests/%: tests/unit/%.c tests/unit/harness.h tests/unit/pass_harness.h $(HDR) $(IMPL_OBJ)
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -Itests/unit -o $@ $< $(IMPL_OBJ) $(ALL_LDFLAGS) $(LDLIBS)

# ---------------------------------------------------------------- golden tests
# tests/golden/<family>/<pass>.mil: the runner (run from the repo root) reads them all.
# It lives in $(B)/tests/, so tests/run.sh runs it with the unit tests.

$(B)/tests/test_golden: tests/golden/golden.c $(HDR) $(IMPL_OBJ)
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -o $@ $< $(IMPL_OBJ) $(ALL_LDFLAGS) $(LDLIBS)
TEST_DEPS += $(B)/tests/test_golden  # run by tests/run.sh with the $(B)/tests/test_* programs

# ---------------------------------------------------------------- compile tests
#
# Each compile-<name> target builds what it checks and runs the program that
# uses it; `make test` builds them all and runs the programs with the unit tests.
# Several targets share a program (a full implementation TU costs ~10 s to
# compile at -O2): decl+c99, static+nosimd, alloc+hooks.

CT  := $(B)/compile
CTD := tests/compile
CT_HDRS := $(HDR) tests/unit/harness.h $(CTD)/smoke.h $(B)/.config
CT_INC  := -Itests/unit -I$(CTD)
CT_RUN   = @out=$$($(1) 2>&1); rc=$$?; printf '%s\n' "$$out" | sed 's/^/$@: /'; exit $$rc

COMPILE_TESTS := decl c99 cxx clangxx static alloc hooks hooks-partial nostdio nosimd
COMPILE_PROGS := $(CT)/test_decl $(CT)/test_cxx $(CT)/test_clangxx $(CT)/test_static \
                 $(CT)/test_alloc $(CT)/test_nostdio
TEST_PROGS += $(COMPILE_PROGS)

.PHONY: $(addprefix compile-,$(COMPILE_TESTS))
compile-tests: $(addprefix compile-,$(COMPILE_TESTS))

# The implementation alone, compiled as C99.
$(CT)/impl_c99.o: $(CTD)/impl_only.c $(HDR) $(B)/.config
	@mkdir -p $(CT)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
compile-c99: $(CT)/test_decl
	$(call CT_RUN,$<)

# Declarations only: including both headers (each alone, in any order, twice)
# defines no symbol; a declarations-only C99 TU links against impl_c99.o.
$(CT)/test_decl: $(CTD)/smoke_main.c $(CTD)/decl_only.c $(CT)/impl_c99.o $(CT_HDRS)
	$(CC) $(ALL_CFLAGS) -c -o $(CT)/decl_only.o $(CTD)/decl_only.c
	@syms=$$(nm --defined-only $(CT)/decl_only.o | grep -vE 'asan|ubsan|sancov|_sub_[ID]_' || true); \
	  if [ -n "$$syms" ]; then \
	  echo "compile-decl: the headers define symbols without MGOPT_IMPLEMENTATION:"; \
	  echo "$$syms"; exit 1; fi
	$(CC) $(ALL_CFLAGS) -c -o $(CT)/decl_main.o $(CT_INC) $(CTD)/smoke_main.c
	$(CC) -o $@ $(CT)/decl_main.o $(CT)/decl_only.o $(CT)/impl_c99.o $(ALL_LDFLAGS) $(LDLIBS)
compile-decl: $(CT)/test_decl
	$(call CT_RUN,$<)

# The implementation compiled as C++ with $(CXX), used from C++.
$(CT)/test_cxx: $(CTD)/smoke_main.c $(CTD)/impl_only.c $(CT_HDRS)
	@mkdir -p $(CT)
	$(CXX) $(ALL_CXXFLAGS) -x c++ -c -o $(CT)/impl_cxx.o $(CTD)/impl_only.c
	$(CXX) $(ALL_CXXFLAGS) -x c++ -c -o $(CT)/main_cxx.o $(CT_INC) $(CTD)/smoke_main.c
	$(CXX) -o $@ $(CT)/main_cxx.o $(CT)/impl_cxx.o $(ALL_LDFLAGS) $(LDLIBS)
compile-cxx: $(CT)/test_cxx
	$(call CT_RUN,$<)

# The implementation compiled as C++ with clang++, used from C (extern "C").
HAVE_CLANGXX := $(shell command -v $(CLANGXX) 2>/dev/null)
ifneq ($(HAVE_CLANGXX),)
$(CT)/test_clangxx: $(CTD)/smoke_main.c $(CTD)/impl_only.c $(CT_HDRS)
	@mkdir -p $(CT)
	$(CLANGXX) $(ALL_CXXFLAGS) -x c++ -c -o $(CT)/impl_clangxx.o $(CTD)/impl_only.c
	$(CLANG) $(ALL_CFLAGS) -c -o $(CT)/main_clang.o $(CT_INC) $(CTD)/smoke_main.c
	$(CLANGXX) -o $@ $(CT)/main_clang.o $(CT)/impl_clangxx.o $(ALL_LDFLAGS) $(LDLIBS)
else
$(CT)/test_clangxx: $(B)/.config
	@mkdir -p $(CT)
	@echo "compile-clangxx: SKIPPED: $(CLANGXX) not found"
	@printf '#!/bin/sh\necho "note: compile-clangxx skipped: $(CLANGXX) not found"\necho "0 passed, 0 failed"\n' > $@
	@chmod +x $@
endif
compile-clangxx: $(CT)/test_clangxx
	$(call CT_RUN,$<)

# MGOPT_STATIC: two translation units, each with its own private copy; the
# first is built with MGOPT_NO_SIMD and folding must agree bit for bit.
$(CT)/test_static: $(CTD)/static_a.c $(CTD)/static_b.c $(CTD)/fold_cases.h $(CT_HDRS)
	@mkdir -p $(CT)
	$(CC) $(ALL_CFLAGS) $(CT_INC) -o $@ $(CTD)/static_a.c $(CTD)/static_b.c $(ALL_LDFLAGS) $(LDLIBS)
compile-static: $(CT)/test_static
	$(call CT_RUN,$<)

# MGOPT_NO_SIMD: no intrinsics header is included, and the bit-identical check above.
compile-nosimd: $(CT)/test_static
	@if $(CC) $(ALL_CFLAGS) -E $(CT_INC) $(CTD)/static_a.c | \
	  grep -E '^# [0-9]+ ".*(intrin|arm_neon|altivec)[^"]*\.h"' ; then \
	  echo "compile-nosimd: MGOPT_NO_SIMD build includes intrinsics headers"; exit 1; fi
	$(call CT_RUN,$< test_nosimd_bit_identical)

# A counting allocator passed to mgopt_program_create (with failure injection),
# and the MGOPT_MALLOC / MGOPT_REALLOC / MGOPT_FREE hooks overridden together.
$(CT)/test_alloc: $(CTD)/alloc.c $(CT_HDRS)
	@mkdir -p $(CT)
	$(CC) $(ALL_CFLAGS) $(CT_INC) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
compile-alloc: $(CT)/test_alloc
	$(call CT_RUN,$<)
compile-hooks: $(CT)/test_alloc
	$(call CT_RUN,$< test_hooks_used_and_balanced)

# Negative compile test: defining only some of the three hooks must stop the
# build with the #error (the preprocessor is enough to see it). The control
# (none defined) must preprocess, so a broken header cannot pass this.
compile-hooks-partial: $(CTD)/hooks_partial.c $(HDR) $(B)/.config
	@mkdir -p $(CT)
	@$(CC) $(ALL_CFLAGS) -E -o $(CT)/hooks_partial0.i $< || \
	  { echo "compile-hooks-partial: the control (no hook defined) does not compile"; exit 1; }
	@for v in 1 2 3 4 5 6; do \
	  if $(CC) $(ALL_CFLAGS) -DHOOKS_PARTIAL=$$v -E -o $(CT)/hooks_partial$$v.i $< \
	       >$(CT)/hooks_partial$$v.log 2>&1; then \
	    echo "compile-hooks-partial: case $$v compiled but must fail"; exit 1; fi; \
	  if ! grep -q 'MGOPT_MALLOC' $(CT)/hooks_partial$$v.log; then \
	    echo "compile-hooks-partial: case $$v failed for another reason:"; \
	    cat $(CT)/hooks_partial$$v.log; exit 1; fi; \
	done; echo "compile-hooks-partial: 6 partial definitions rejected, control compiles"

# MGOPT_NO_STDIO: the implementation TU references no stdio stream or file function.
$(CT)/test_nostdio: $(CTD)/nostdio_impl.c $(CTD)/smoke_main.c $(CT_HDRS)
	@mkdir -p $(CT)
	$(CC) $(ALL_CFLAGS) -c -o $(CT)/nostdio_impl.o $(CTD)/nostdio_impl.c
	@bad=$$(nm -u $(CT)/nostdio_impl.o | awk '{print $$NF}' | \
	  grep -E '^(_?_?IO_|f?open|fdopen|freopen|fclose|fread|fwrite|fgets|fputs|fputc|putc|putchar|puts|printf|fprintf|vprintf|vfprintf|fflush|fseeko?|ftello?|rewind|getc|fgetc|getchar|perror|stdin|stdout|stderr|tmpfile|remove|rename)(@.*)?$$' || true); \
	  if [ -n "$$bad" ]; then echo "compile-nostdio: MGOPT_NO_STDIO build uses:" $$bad; exit 1; fi
	$(CC) $(ALL_CFLAGS) -c -o $(CT)/nostdio_main.o $(CT_INC) $(CTD)/smoke_main.c
	$(CC) -o $@ $(CT)/nostdio_main.o $(CT)/nostdio_impl.o $(ALL_LDFLAGS) $(LDLIBS)
compile-nostdio: $(CT)/test_nostdio
	$(call CT_RUN,$<)

# ---------------------------------------------------------------- examples
#
# Each example is built with the default flags of this configuration and run;
# exit status 0 passes, 77 is a skip (the example printed why), anything else fails.
# examples/demo.mil must go through the tool's default pipeline, verified after each pass,
# and come out as conv -> relu (batch_norm fused, dead sigmoid and unit mul gone).

EXAMPLE_SRC := $(sort $(wildcard examples/*.c))
EXAMPLE_BIN := $(patsubst examples/%.c,$(B)/examples/%,$(EXAMPLE_SRC))

$(B)/examples/%: examples/%.c $(HDR) $(B)/.config
	@mkdir -p $(B)/examples
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)

examples: $(EXAMPLE_BIN)

# The loop `make test` and `make run-examples` use.
define RUN_EXAMPLES
pass=0; fail=0; skip=0; \
for e in $(EXAMPLE_BIN); do \
  n=$$(basename $$e); \
  $$e > $$e.out 2>&1; rc=$$?; \
  if [ $$rc -eq 0 ]; then pass=$$((pass+1)); echo "example $$n: ok"; \
  elif [ $$rc -eq 77 ]; then skip=$$((skip+1)); \
    echo "example $$n: SKIPPED: $$(tail -n 1 $$e.out)"; \
  else fail=$$((fail+1)); echo "example $$n: FAILED (exit $$rc):"; tail -n 30 $$e.out; fi; \
done; \
if $(B)/mgopt examples/demo.mil -o $(B)/demo_check.mil -p default --verify-each \
     > $(B)/demo_check.out 2>&1 && ! grep -qE 'batch_norm|sigmoid|mul\(' $(B)/demo_check.mil; \
then pass=$$((pass+1)); echo "example demo.mil: ok"; \
else fail=$$((fail+1)); echo "example demo.mil: FAILED:"; tail -n 30 $(B)/demo_check.out; fi; \
echo "examples: $$pass passed, $$fail failed, $$skip skipped"; [ $$fail -eq 0 ]
endef

run-examples: $(EXAMPLE_BIN) $(B)/mgopt
	@$(RUN_EXAMPLES)

# ---------------------------------------------------------------- the tool
# tests/tool/test_tool.sh: file I/O end to end (mapped input, in-place output,
# external data, --repeat), the tool's error messages, and the README's pass
# table against --list-passes.
TEST_CMDS += 'tests/tool/test_tool.sh $(B)/mgopt'

# Prints the README's pass table from `mgopt --list-passes`.
.PHONY: pass-table
pass-table: $(B)/mgopt
	@sh tests/tool/pass_table.sh $(B)/mgopt

# ---------------------------------------------------------------- fuzz corpus replays
# >>> Rules for the fuzz harnesses and their corpus replays go in this section.
# >>> Build replay programs here and append them to TEST_PROGS (or TEST_CMDS +
# >>> TEST_DEPS); `make test` picks them up.

# ---- .mil fuzzing: the corpus replays in `make test`; `make fuzz-mil` builds the libFuzzer binary
$(B)/tests/test_fuzz_mil: tests/fuzz/fuzz_mil.c $(HDR) $(B)/.config
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -DMGOPT_FUZZ_REPLAY -DMGOPT_FUZZ_CORPUS='"$(CURDIR)/tests/fuzz/corpus/mil"' -o $@ tests/fuzz/fuzz_mil.c $(ALL_LDFLAGS) $(LDLIBS)
TEST_DEPS += $(B)/tests/test_fuzz_mil  # in $(B)/tests/: run by tests/run.sh

.PHONY: fuzz-mil
fuzz-mil: $(B)/fuzz_mil
$(B)/fuzz_mil: tests/fuzz/fuzz_mil.c $(HDR)
	@mkdir -p $(B)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -I. -o $@ tests/fuzz/fuzz_mil.c -lm

# ---- ONNX reader fuzzing: the corpus replay runs with `make test`; `make fuzz-onnx` fuzzes
FUZZ_TIME ?= 600
.PHONY: fuzz-onnx
$(B)/tests/test_fuzz_onnx: tests/fuzz/fuzz_onnx.c tests/fuzz/replay.h $(HDR) $(B)/.config
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -DMGOPT_FUZZ_REPLAY -o $@ tests/fuzz/fuzz_onnx.c $(ALL_LDFLAGS) $(LDLIBS)
TEST_DEPS += $(B)/tests/test_fuzz_onnx  # in $(B)/tests/: run by tests/run.sh
$(B)/fuzz_onnx: tests/fuzz/fuzz_onnx.c $(HDR)
	@mkdir -p $(B)
	clang -O1 -g -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -I. -o $@ tests/fuzz/fuzz_onnx.c -lm
fuzz-onnx: $(B)/fuzz_onnx
	@mkdir -p $(B)/fuzz-corpus-onnx
	$(B)/fuzz_onnx -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 $(B)/fuzz-corpus-onnx tests/fuzz/corpus/onnx

# ---- ONNX write-back fuzzing (tests/fuzz/fuzz_roundtrip.c): every model that imports must export
# and import again; the replay (corpus/onnx and corpus/roundtrip) runs with `make test`;
# `make fuzz-roundtrip` fuzzes
.PHONY: fuzz-roundtrip
$(B)/tests/test_fuzz_roundtrip: tests/fuzz/fuzz_roundtrip.c tests/fuzz/replay.h $(HDR) $(B)/.config
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -DMGOPT_FUZZ_REPLAY -o $@ tests/fuzz/fuzz_roundtrip.c $(ALL_LDFLAGS) $(LDLIBS)
TEST_DEPS += $(B)/tests/test_fuzz_roundtrip  # in $(B)/tests/: run by tests/run.sh
$(B)/fuzz_roundtrip: tests/fuzz/fuzz_roundtrip.c $(HDR)
	@mkdir -p $(B)
	clang -O1 -g -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -I. -o $@ tests/fuzz/fuzz_roundtrip.c -lm
fuzz-roundtrip: $(B)/fuzz_roundtrip
	@mkdir -p $(B)/fuzz-corpus-roundtrip
	$(B)/fuzz_roundtrip -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 $(B)/fuzz-corpus-roundtrip tests/fuzz/corpus/roundtrip tests/fuzz/corpus/onnx

# ---- evaluator fuzzing (tests/fuzz/fuzz_eval.c): random programs from the difftest generator,
# evaluated before and after `default`; the corpus replays in `make test`; `make fuzz-eval` fuzzes
DT_SRC := tests/difftest/gen.c tests/difftest/check.c tests/difftest/lib.c
DT_HDR := tests/difftest/gen.h tests/difftest/check.h
$(B)/tests/test_fuzz_eval: tests/fuzz/fuzz_eval.c $(B)/difftest-obj/gen.o $(B)/difftest-obj/check.o $(B)/difftest-obj/lib.o $(DT_HDR) $(HDR) $(B)/.config
	@mkdir -p $(B)/tests
	$(CC) $(ALL_CFLAGS) -DMGOPT_FUZZ_REPLAY -DMGOPT_FUZZ_CORPUS='"$(CURDIR)/tests/fuzz/corpus/eval"' -o $@ tests/fuzz/fuzz_eval.c $(B)/difftest-obj/gen.o $(B)/difftest-obj/check.o $(B)/difftest-obj/lib.o $(ALL_LDFLAGS) $(LDLIBS)
TEST_DEPS += $(B)/tests/test_fuzz_eval  # in $(B)/tests/: run by tests/run.sh
.PHONY: fuzz-eval
$(B)/fuzz_eval: tests/fuzz/fuzz_eval.c $(DT_SRC) $(DT_HDR) $(HDR)
	@mkdir -p $(B)
	clang -O1 -g -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -I. -o $@ tests/fuzz/fuzz_eval.c $(DT_SRC) -lm
fuzz-eval: $(B)/fuzz_eval
	@mkdir -p $(B)/fuzz-corpus-eval
	$(B)/fuzz_eval -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 $(B)/fuzz-corpus-eval tests/fuzz/corpus/eval

# <<< end of the fuzz section

# ---------------------------------------------------------------- differential testing
# Every pass and named pipeline on random programs (tests/difftest/gen.c), evaluated
# before and after with mgopt_eval. `make difftest` runs DIFFTEST_N programs per pass
# (DIFFTEST_SEED, the first seed); `make test` runs a fixed budget (DIFFTEST_CI_N
# programs per pass, seed 1; 2 with SAN=1) that takes well under 2 minutes. The first
# mismatch of a pass is written to $(B)/difftest-fail/<pass>.mil ($(B)/<pass>.mil in
# `make test`). One program in four is a golden case of the pass, read from
# $(CURDIR)/tests/golden (compiled in; `difftest --corpus DIR` overrides it).
# `difftest --replay FILE...` checks such a saved program again; a fixed one goes
# to tests/difftest/regress/, which `make test` replays.
.PHONY: difftest
DIFFTEST_N ?= 20
DIFFTEST_SEED ?= 1
# the ASan+UBSan build runs each program ~10x slower: a smaller budget there
ifeq ($(SAN),1)
DIFFTEST_CI_N ?= 2
endif
DIFFTEST_CI_N ?= 6
$(B)/difftest-obj/lib.o: tests/difftest/lib.c $(HDR) $(B)/.config
	@mkdir -p $(B)/difftest-obj
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(B)/difftest-obj/difftest.o: tests/difftest/difftest.c tests/difftest/gen.h tests/difftest/check.h $(HDR) $(B)/.config
	@mkdir -p $(B)/difftest-obj
	$(CC) $(ALL_CFLAGS) -DMGOPT_DIFFTEST_CORPUS='"$(CURDIR)/tests/golden"' -c -o $@ $<
$(B)/difftest-obj/%.o: tests/difftest/%.c tests/difftest/gen.h tests/difftest/check.h $(HDR) $(B)/.config
	@mkdir -p $(B)/difftest-obj
	$(CC) $(ALL_CFLAGS) -c -o $@ $<
$(B)/difftest: $(B)/difftest-obj/lib.o $(B)/difftest-obj/difftest.o $(B)/difftest-obj/gen.o $(B)/difftest-obj/check.o
	$(CC) -o $@ $^ $(ALL_LDFLAGS) $(LDLIBS)
difftest: $(B)/difftest
	@mkdir -p $(B)/difftest-fail
	DIFFTEST_N=$(DIFFTEST_N) DIFFTEST_SEED=$(DIFFTEST_SEED) $(B)/difftest --out $(B)/difftest-fail
TEST_CMDS += '$(B)/difftest -n $(DIFFTEST_CI_N) --seed 1 --out $(B) --summary'
# the saved programs of fixed mismatches (a pass's or the checker's), checked again
TEST_CMDS += '$(B)/difftest --replay $(wildcard $(CURDIR)/tests/difftest/regress/*.mil)'
TEST_DEPS += $(B)/difftest

# ---------------------------------------------------------------- install
# make install [PREFIX=/usr/local] [DESTDIR=/staging]: the two headers, the tool,
# a pkg-config file and a CMake package (find_package(mgopt CONFIG) gives the
# INTERFACE target mgopt::mgopt), under $(DESTDIR)$(PREFIX). make uninstall removes
# exactly those files (and lib/cmake/mgopt, which only holds them). The CMake
# build's `cmake --install` writes the same files. The version is
# MGOPT_VERSION_STRING in src/api.h, read from there by both builds.
PREFIX  ?= /usr/local
DESTDIR ?=
INSTALL ?= install
MGOPT_VERSION := $(shell sed -n 's/^\#define MGOPT_VERSION_STRING "\(.*\)"$$/\1/p' src/api.h)
PKG_FILES := $(B)/pkg/mgopt.pc $(B)/pkg/mgoptConfigVersion.cmake
INSTALLED := bin/mgopt include/mgopt.h include/mgopt_passes.h lib/pkgconfig/mgopt.pc \
             lib/cmake/mgopt/mgoptConfig.cmake lib/cmake/mgopt/mgoptConfigVersion.cmake \
             lib/cmake/mgopt/mgoptTargets.cmake
.PHONY: install uninstall print-version
$(B)/pkg/%: tools/pkg/%.in src/api.h
	@mkdir -p $(B)/pkg
	sed 's/@MGOPT_VERSION@/$(MGOPT_VERSION)/g' $< > $@
install: $(B)/mgopt $(HDR) $(PKG_FILES)
	@test -n "$(MGOPT_VERSION)" || { echo "install: no MGOPT_VERSION_STRING in src/api.h"; exit 1; }
	$(INSTALL) -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/lib/cmake/mgopt
	$(INSTALL) -m 755 $(B)/mgopt $(DESTDIR)$(PREFIX)/bin/mgopt
	$(INSTALL) -m 644 $(HDR) $(DESTDIR)$(PREFIX)/include/
	$(INSTALL) -m 644 $(B)/pkg/mgopt.pc $(DESTDIR)$(PREFIX)/lib/pkgconfig/mgopt.pc
	$(INSTALL) -m 644 tools/pkg/mgoptConfig.cmake tools/pkg/mgoptTargets.cmake \
	  $(B)/pkg/mgoptConfigVersion.cmake $(DESTDIR)$(PREFIX)/lib/cmake/mgopt/
uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))
	rmdir $(DESTDIR)$(PREFIX)/lib/cmake/mgopt 2>/dev/null || true
print-version:
	@echo $(MGOPT_VERSION)

# installs into a temporary DESTDIR and builds a consumer with pkg-config and with CMake
# (its `make install` inherits this make's variables, so $(B) is not rebuilt)
TEST_CMDS += 'tests/install/test_install.sh $(B) "$(CC)"'
.PHONY: test-install
test-install: $(B)/mgopt
	@tests/install/test_install.sh $(B) "$(CC)"

# ---------------------------------------------------------------- valgrind
# `make test-valgrind B=build-vg CFLAGS="-O1 -g"`: the suite under memcheck
# (tests/valgrind.sh); about 15 CPU-minutes. Not part of `make test`.
.PHONY: test-valgrind
test-valgrind: $(B)/mgopt $(UNIT_BIN) $(TEST_PROGS) $(TEST_DEPS) $(EXAMPLE_BIN)
	@sh tests/valgrind.sh $(B)

# ---------------------------------------------------------------- test
# Kept last so that every append to TEST_PROGS / TEST_CMDS / TEST_DEPS above is seen.

.SECONDEXPANSION:
test: $(B)/mgopt $(UNIT_BIN) $$(TEST_PROGS) $$(TEST_DEPS) compile-hooks-partial $(EXAMPLE_BIN)
	@st=0; $(SAN_STACK) sh tests/run.sh $(B) $(TEST_PROGS) $(TEST_CMDS) || st=1; \
	{ $(RUN_EXAMPLES); } || st=1; \
	exit $$st

clang-test:
	$(MAKE) test CC=$(CLANG) CXX=$(CLANGXX) B=build-clang

asan-test:
	@if command -v $(CLANG) >/dev/null 2>&1; then \
	  $(MAKE) test SAN=1 CC=$(CLANG) CXX=$(CLANGXX) B=build-asan; \
	else $(MAKE) test SAN=1 B=build-asan; fi

# ---------------------------------------------------------------- other architectures
# make test-cross ARCH=s390x|aarch64: the unit and golden tests built by Debian's
# cross compiler (<triple>-gcc, packages gcc-<triple> and libc6-dev-<arch>-cross)
# at -O1 into build-<ARCH>/, and run under qemu-user (qemu-<ARCH>, libraries
# from /usr/<triple>) unless the host is that architecture. s390x is
# big-endian (ONNX data is little-endian) and evaluates float expressions in
# double (FLT_EVAL_METHOD 1 at -std=c99); aarch64 has an unsigned char.
CROSS_TRIPLE_s390x   := s390x-linux-gnu
CROSS_TRIPLE_aarch64 := aarch64-linux-gnu
CROSS_TRIPLE := $(CROSS_TRIPLE_$(ARCH))
.PHONY: test-cross cross-run
test-cross:
	@if [ -z "$(CROSS_TRIPLE)" ]; then echo "test-cross: ARCH must be s390x or aarch64"; exit 2; fi
	@$(MAKE) --no-print-directory cross-run ARCH=$(ARCH) CC=$(CROSS_TRIPLE)-gcc B=build-$(ARCH) \
	  CFLAGS="$(if $(filter file,$(origin CFLAGS)),-O1,$(CFLAGS))" HOSTCC=cc
cross-run: $(UNIT_BIN) $(B)/tests/test_golden
	@if [ "$$(uname -m)" = "$(ARCH)" ]; then runner=; else runner=qemu-$(ARCH); fi; \
	echo "test-cross: $(ARCH) ($(CC) $(CFLAGS)) $${runner:+under $$runner}"; \
	QEMU_LD_PREFIX=/usr/$(CROSS_TRIPLE) MGOPT_TEST_RUNNER=$$runner sh tests/run.sh $(B)

# ---------------------------------------------------------------- benchmarks (not in `make test`)
# tests/bench/: measurements, never tests; each prints its figures.

# The rewriter's driver, the verifier and `cleanup` on chains of 10^5 and 10^6 ops.
.PHONY: bench-rewriter
$(B)/bench_rewriter: tests/bench/bench_rewriter.c tests/bench/bench.h tools/keep_memory.h $(HDR) $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
bench-rewriter: $(B)/bench_rewriter
	$(B)/bench_rewriter

# Every pass alone at two program sizes: per-op cost and its growth (linear ~ 1).
.PHONY: bench-passes
BENCH_PASSES_ARGS ?= 2000 8000
$(B)/bench_passes: tests/bench/bench_passes.c tests/bench/bench.h tools/keep_memory.h $(HDR) $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
bench-passes: $(B)/bench_passes
	$(B)/bench_passes $(BENCH_PASSES_ARGS)

# fp32 -> fp16 bulk conversion throughput (F16C with e.g. CFLAGS="-O2 -march=native").
.PHONY: bench-fp16
$(B)/bench_fp16: tests/bench/bench_fp16.c tests/bench/bench.h tools/keep_memory.h $(HDR) $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
bench-fp16: $(B)/bench_fp16
	$(B)/bench_fp16

# linear_quantize_weights throughput on a 16M-element weight (G elements/s).
.PHONY: bench-quant
$(B)/bench_quant: tests/bench/bench_quant.c tests/bench/bench.h tools/keep_memory.h $(HDR) $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
bench-quant: $(B)/bench_quant
	$(B)/bench_quant

# 4-bit k-means palettization of a 16 M-element weight.
.PHONY: bench-palettize
$(B)/bench_palettize: tests/bench/bench_palettize.c tests/bench/bench.h tools/keep_memory.h $(HDR) $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
bench-palettize: $(B)/bench_palettize
	$(B)/bench_palettize

# The least time a model's file I/O takes in process (used by tests/bench/onnx_e2e).
$(B)/io_floor: tests/bench/io_floor.c tests/bench/bench.h $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS)

# Peak memory of the tool on a model with > 2 GB of external weights; needs ~7 GB
# free under $TMPDIR (or /tmp). BENCH_BIG_ARGS e.g. '--weights 5 --mb 450'.
.PHONY: bench-big
BENCH_BIG_ARGS ?=
$(B)/bench_big_model: tests/bench/bench_big_model.c tests/bench/bench.h tools/keep_memory.h $(HDR) $(B)/.config
	$(CC) $(ALL_CFLAGS) -o $@ $< $(ALL_LDFLAGS) $(LDLIBS)
bench-big: $(B)/mgopt $(B)/bench_big_model
	$(B)/bench_big_model --mgopt $(B)/mgopt $(BENCH_BIG_ARGS)
