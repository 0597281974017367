# Resource limits, inputs of any length, stops on SIGINT and small command-line checks
# (docs/reliability.md). Uses attnprop_cli_test of cli_tests.cmake; model files in
# golden/limits/.
set(_lim ${CMAKE_CURRENT_SOURCE_DIR}/golden/limits)
set(_exact_bits_msg "above the limit exact-bits = 65536 bits. raise it with --limit exact-bits=N .or ATTNPROP_LIMITS=exact-bits=N.")

# Exact rationals that square themselves stop at the exact-bits limit (they used to hang, or
# abort in GMP with "Cannot allocate memory").
attnprop_cli_test(limit-square-40-eval 2 "exact evaluation produced a number of [0-9]+ bits .numerator or denominator., ${_exact_bits_msg}"
                  eval --model ${_lim}/square40.json --input 01)
attnprop_cli_test(limit-square-40-restrict 2 "${_exact_bits_msg}"
                  restrict --model ${_lim}/square40.json --n 8 --out ${CMAKE_CURRENT_BINARY_DIR}/limit-square-40)
attnprop_cli_test(limit-chain-mul 2 "${_exact_bits_msg}" eval --model ${_lim}/chain_mul.json --input 01)
attnprop_cli_test(limit-chain-mul-raised 2 "above the limit exact-bits = 1048576 bits"
                  eval --model ${_lim}/chain_mul.json --input 01 --limit exact-bits=1M)
attnprop_cli_test(limit-formula-power 2 "an exact power would have [0-9]+ bits in formula '7..10.12.' at i=1, n=2, ${_exact_bits_msg}"
                  eval --model ${_lim}/power_formula.json --input 0)
# Model-file limits: located in the file, named, with the option.
attnprop_cli_test(limit-readout-symbols 2 "symbols10.json:[0-9]+:[0-9]+: error: the readout has 10 symbols, above the limit readout-symbols = 8 symbols. raise it with --limit readout-symbols=N .or ATTNPROP_LIMITS=readout-symbols=N. .at /readout/symbols.$"
                  eval --model ${_lim}/symbols10.json --input 01 --limit readout-symbols=8)
attnprop_cli_test(limit-readout-symbols-bound 2 "the readout has 10 symbols, above the limit readout-symbols = 8"
                  bound --model ${_lim}/symbols10.json --limit readout-symbols=8)
attnprop_cli_test(limit-readout-symbols-raised 0 "P.next." eval --model ${_lim}/symbols10.json --input 01)
attnprop_cli_test(readout-symbol-twice 2 "symbols_duplicate.json:[0-9]+:[0-9]+: error: output symbol 's2' appears twice .at /readout/symbols/7.$"
                  eval --model ${_lim}/symbols_duplicate.json --input 01)
attnprop_cli_test(limit-graph-nodes 2 "error: the graph has 8 nodes, above the limit graph-nodes = 4 nodes. raise it with --limit graph-nodes=N .* .at /layers/0/update/nodes.$"
                  eval --model ${_lim}/graph8.json --input 01 --limit graph-nodes=4)
attnprop_cli_test(limit-table-entries 2 "error: the table has 3 entries, above the limit table-entries = 2 entries.* .at /layers/0/update/entries.$"
                  eval --model ${_lim}/table3.json --input 01 --limit table-entries=2)
attnprop_cli_test(limit-positional-table 2 "error: the positional table has 5 rows, above the limit table-entries = 4 entries"
                  eval --model ${_lim}/positional_table5.json --input 01 --limit table-entries=4)
attnprop_cli_test(limit-unknown-name 2 "--limit: unknown limit 'nope' .known: exact-bits, readout-symbols"
                  eval --model hard-first --input 01 --limit nope=3)
attnprop_cli_test(limit-bad-value 2 "--limit: exact-bits: '12x' is not a positive integer"
                  eval --model hard-first --input 01 --limit exact-bits=12x)
attnprop_cli_test(limit-help 0 "--limit NAME=VALUE" eval --help)
add_test(NAME "golden: cli limit-environment"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 2 "above the limit graph-nodes = 4 nodes" --
                 ${CMAKE_COMMAND} -E env ATTNPROP_LIMITS=table-entries=9,graph-nodes=4
                 $<TARGET_FILE:attnprop_cli> eval --model ${_lim}/graph8.json --input 01)
add_test(NAME "golden: cli limit-environment-bad"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 2 "ATTNPROP_LIMITS: graph-nodes: the value must be at least 1" --
                 ${CMAKE_COMMAND} -E env ATTNPROP_LIMITS=graph-nodes=0
                 $<TARGET_FILE:attnprop_cli> eval --model ${_lim}/graph8.json --input 01)
# --limit on the command line wins over the environment.
add_test(NAME "golden: cli limit-option-over-environment"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 0 "readout +accept" --
                 ${CMAKE_COMMAND} -E env ATTNPROP_LIMITS=graph-nodes=4
                 $<TARGET_FILE:attnprop_cli> eval --model ${_lim}/graph8.json --input 01 --limit graph-nodes=8)

# A formula without a value somewhere cannot give bounded embeddings (bound agrees with eval).
attnprop_cli_test(bound-undefined-formula 0 "bounded-embeddings +no +coordinate 0: '.-1.\\^.1/2.' is undefined at i=1, n=1"
                  bound --model ${_lim}/sqrt_minus_one.json)
attnprop_cli_test(bound-undefined-formula-verdict 0 "Lemma 5 does not apply"
                  bound --model ${_lim}/sqrt_minus_one.json)
attnprop_cli_test(eval-undefined-formula 4 "undefined at layer 0, node 'positional embedding', position 1"
                  eval --model ${_lim}/sqrt_minus_one.json --input 0)
attnprop_cli_test(bound-pole-formula 0 "bounded-embeddings +no +coordinate 0: '1/.i-2.' is undefined at i=2, n=2"
                  bound --model ${_lim}/pole_at_2.json)

# Seeds are integers in [0, 2^64): no wrapping of -1 or 2^64.
attnprop_cli_test(seed-negative 2 "the seed must be a decimal integer in .0, 2.64., got '-1'" check --seed -1 --list)
attnprop_cli_test(seed-2-64 2 "the seed must be below 2.64, got 18446744073709551616"
                  restrict --model hard-first --n 8 --seed 18446744073709551616)
attnprop_cli_test(seed-influence-negative 2 "--seed" influence --model cc-first --n 8 --seed -1)
attnprop_cli_test(seed-max 0 "controls/double-equals-exact" check --seed 18446744073709551615 --list)

# --model names something that is no model file.
attnprop_cli_test(model-dev-null 2 "--model /dev/null is a character device, not a model file"
                  eval --model /dev/null --input 0)
attnprop_cli_test(model-directory 2 "--model ${_lim} is a directory, not a model file"
                  eval --model ${_lim} --input 0)

# Inputs of any length, the trace budget, the work of a forward pass, many readout symbols,
# FIFOs: one script (it makes its large inputs on the fly).
add_test(NAME "golden: cli limits-and-long-inputs"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/limits.sh $<TARGET_FILE:attnprop_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/limits-work)
set_tests_properties("golden: cli limits-and-long-inputs" PROPERTIES LABELS golden TIMEOUT 120
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")

# The regressions of the adversarial campaign (docs/reliability.md): a model of 25 000 layers, a
# model of width 4096 from 25 KB, a beta that is not positive under check, a link planted at a
# report's temporary, a FIFO and /dev/zero as a counterexample's model, 1e-100000 in the
# canonical form, PNG temporaries of killed runs, a dangling --out, decimal integer options and
# a repeated n.
add_test(NAME "golden: cli reliability regressions"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/reliability.sh $<TARGET_FILE:attnprop_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/reliability-work)
set_tests_properties("golden: cli reliability regressions" PROPERTIES LABELS golden TIMEOUT 300
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")

# SIGINT: check, influence and restrict write what they finished and exit 130.
add_test(NAME "golden: cli interrupt"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/interrupt.sh $<TARGET_FILE:attnprop_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/interrupt-work)
set_tests_properties("golden: cli interrupt" PROPERTIES LABELS golden TIMEOUT 180
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")

foreach(_t limit-environment limit-environment-bad limit-option-over-environment)
  set_tests_properties("golden: cli ${_t}" PROPERTIES LABELS golden
                       ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
endforeach()

# restrict and influence check the work of every n before the first one.
attnprop_cli_test(limit-attention-work-restrict 2 "one forward pass of hard-parity-attempt at n = 1048576 computes about [0-9,]+ score terms, above the limit attention-work"
                  restrict --model hard-parity-attempt --n 16,1048576)
attnprop_cli_test(limit-attention-work-influence 2 "one forward pass of cc-first at n = 1048576 computes about [0-9,]+ score terms, above the limit attention-work"
                  influence --model cc-first --n 8,1048576 --out ${CMAKE_CURRENT_BINARY_DIR}/limit-attention-work-influence)

# An allocation that fails is exit 2 with what was being computed (not an abort, not the OOM
# killer): n = 10^6 + 1 under a 200 MB address-space limit. Not under the sanitizers, whose
# shadow memory needs terabytes of address space.
if(NOT ATTNPROP_SANITIZE)
  add_test(NAME "golden: cli out-of-memory"
           COMMAND sh -c "yes 1 | head -c 2000000 > '${CMAKE_CURRENT_BINARY_DIR}/oom-input' && ulimit -v 200000 && exec sh '${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh' 2 '^attnprop: error: out of memory while evaluating hard-first at n = 1000001. the input is too large for the memory available$' -- '$<TARGET_FILE:attnprop_cli>' eval --model hard-first --input-file '${CMAKE_CURRENT_BINARY_DIR}/oom-input'")
  set_tests_properties("golden: cli out-of-memory" PROPERTIES LABELS golden
                       ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
endif()

# A working precision of 0 from a counterexample folder: exit 2, never flint_abort.
attnprop_cli_test(replay-precision-0 2 "precision"
                  replay ${_lim}/replay-precision-0)

# Found by the fuzzing tier (fuzz/regressions/formula/): 0^(-1) at every point, once taken for
# a formula defined everywhere, so bound said bounded-embeddings yes while eval was undefined.
attnprop_cli_test(fuzz-negated-power-bound 0 "bounded-embeddings +no +coordinate 0: '-0.-.-.-1..1..i.101' is undefined at i=1, n=1"
                  bound --model ${_lim}/fuzz_negated_power.json)
attnprop_cli_test(fuzz-negated-power-eval 4 "undefined at layer 0, node 'positional embedding', position 1 .zero raised to a negative power"
                  eval --model ${_lim}/fuzz_negated_power.json --input 0 --scalar exact)
