# mgopt — build, test and demo. Needs only a C compiler and make.
CC      ?= cc
CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Wpedantic
LDLIBS  := -lm
B       := build

SRC := $(shell find src -type f | sort)

.PHONY: all amalgamate check-amalgamation test demo clean

all: $(B)/mgopt

$(B)/amalgamate: tools/amalgamate.c
	@mkdir -p $(B)
	$(CC) -O1 -g -std=c99 -Wall -Wextra -o $@ $<

# Regenerates the two committed headers from src/.
amalgamate: $(B)/amalgamate
	$(B)/amalgamate src .

mgopt.h mgopt_passes.h: $(SRC) $(B)/amalgamate
	$(B)/amalgamate src .

check-amalgamation: $(B)/amalgamate
	$(B)/amalgamate src . --check

$(B)/mgopt: tools/mgopt.c mgopt.h mgopt_passes.h
	@mkdir -p $(B)
	$(CC) $(CFLAGS) $(WARN) -I. -o $@ tools/mgopt.c $(LDLIBS)

clean:
	rm -rf $(B)

# ---- tests
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))

$(B)/tests/%: tests/unit/%.c tests/unit/harness.h mgopt.h mgopt_passes.h
	@mkdir -p $(B)/tests
	$(CC) $(CFLAGS) $(WARN) -I. -Itests/unit -o $@ $< $(LDLIBS)

$(B)/tests/test_golden: tests/golden/golden.c mgopt.h mgopt_passes.h
	@mkdir -p $(B)/tests
	$(CC) $(CFLAGS) $(WARN) -I. -o $@ $< $(LDLIBS)

test: $(B)/mgopt $(UNIT_BIN) $(B)/tests/test_golden
	@sh tests/run.sh $(B)

# Real models and ONNX's conformance suite under ONNX Runtime (needs node + npm; not in CI).
check-models: $(B)/mgopt
	bash tools/check_models.sh

# ---- .mil fuzzing: the corpus replays in `make test`; `make fuzz-mil` builds the libFuzzer binary
$(B)/tests/test_fuzz_mil: tests/fuzz/fuzz_mil.c mgopt.h
	@mkdir -p $(B)/tests
	$(CC) $(CFLAGS) $(WARN) -I. -DMGOPT_FUZZ_REPLAY -DMGOPT_FUZZ_CORPUS='"$(CURDIR)/tests/fuzz/corpus/mil"' -o $@ tests/fuzz/fuzz_mil.c $(LDLIBS)

test: $(B)/tests/test_fuzz_mil

.PHONY: fuzz-mil
fuzz-mil: $(B)/fuzz_mil
$(B)/fuzz_mil: tests/fuzz/fuzz_mil.c mgopt.h
	@mkdir -p $(B)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-omit-frame-pointer -I. -o $@ tests/fuzz/fuzz_mil.c -lm
