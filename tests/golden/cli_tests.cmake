# Command-line contract tests: exit codes and key output, one add_test per case.
# attnprop_cli_test(NAME EXIT REGEX args...) runs `attnprop args...` through expect.sh.
function(attnprop_cli_test name exit_code regex)
  add_test(NAME "golden: cli ${name}"
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh ${exit_code} "${regex}" --
                   $<TARGET_FILE:attnprop_cli> ${ARGN})
  set_tests_properties("golden: cli ${name}" PROPERTIES LABELS golden
                       ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
endfunction()

attnprop_cli_test(help 0 "eval" --help)
attnprop_cli_test(eval-help 0 "--scalar" eval --help)
attnprop_cli_test(no-subcommand 2 "subcommand" )
attnprop_cli_test(unknown-subcommand 2 "frobnicate" frobnicate)
attnprop_cli_test(models 0 "hard-parity-attempt +hard" models)
# The longest name keeps a space before its attention kind.
attnprop_cli_test(models-columns 0 "average-first-one-position +average-hard +L=1" models)
attnprop_cli_test(models-json 0 "\"name\": \"cc-parity\"" models --json)
attnprop_cli_test(eval-hard-accept 0 "readout +accept" eval --model hard-first --input 10)
attnprop_cli_test(eval-hard-reject 0 "readout +reject" eval --model hard-first --input 01)
attnprop_cli_test(eval-hard-json 0 "\"accept\": true" eval --model hard-contains-one --input 0010 --json)
attnprop_cli_test(eval-hard-exact-y 0 "\"y\": \\[\"1\"\\]" eval --model hard-first --input 1 --json)
attnprop_cli_test(eval-empty-input 0 "n = 1" eval --model hard-first --input=)
attnprop_cli_test(eval-trace 0 "attends h1->1" eval --model hard-first --input 10 --trace)
attnprop_cli_test(eval-soft-ball 0 "\"probabilities_radius\"" eval --model cc-parity --input 0110 --json)
attnprop_cli_test(eval-soft-mpfr 0 "P\\(next\\)" eval --model cc-first --input 1 --scalar mpfr)
attnprop_cli_test(eval-soft-double 0 "\"precision\": 53" eval --model cc-first --input 1 --scalar double --json)
attnprop_cli_test(eval-soft-exact-refused 2 "cannot evaluate this model.*softmax" eval --model cc-parity --input 01 --scalar exact)
attnprop_cli_test(eval-ln-exact-refused 2 "cannot evaluate" eval --model cc-parity-ln0 --input 01 --scalar exact)
attnprop_cli_test(eval-unknown-model 2 "no model file or bundled model named 'nope'" eval --model nope --input 0)
attnprop_cli_test(eval-bad-scalar 2 "--scalar" eval --model hard-first --input 0 --scalar quad)
attnprop_cli_test(eval-bad-precision 2 "--precision" eval --model hard-first --input 0 --precision 3)
attnprop_cli_test(eval-missing-input 2 "--input" eval --model hard-first)
attnprop_cli_test(eval-symbol-outside 2 "symbol '2' at position 2 is not in the alphabet" eval --model hard-first --input 02)
attnprop_cli_test(eval-eos-in-input 2 "must not contain eos" eval --model hard-first --input "0$")

# check / replay: controls must fail (exit 1) and leave replayable folders.
set(_ctl_out ${CMAKE_CURRENT_BINARY_DIR}/golden-controls)
add_test(NAME "golden: cli check-controls-fails"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "controls/double-equals-exact +failed" --
                 $<TARGET_FILE:attnprop_cli> check --suite controls --tests 60 --max-n 32 --seed 7
                 --out ${_ctl_out})
set_tests_properties("golden: cli check-controls-fails" PROPERTIES LABELS golden
                     FIXTURES_SETUP controls_report)
foreach(_ctl hard-output-ignores-x1 soft-influence-below-1-over-n2 double-equals-exact
             hard-recognizes-language influence-decays-like-1-over-n2
             soft-leak-vanishes-at-log-n-over-gamma soft-agrees-at-constant-beta
             soft-leak-vanishes-at-beta-n-gap-1-over-n)
  add_test(NAME "golden: cli replay-${_ctl}"
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "verdict +failed" --
                   $<TARGET_FILE:attnprop_cli> replay ${_ctl_out}/counterexamples/controls-${_ctl})
  set_tests_properties("golden: cli replay-${_ctl}" PROPERTIES LABELS golden
                       FIXTURES_REQUIRED controls_report)
endforeach()
add_test(NAME "golden: cli replay-ambiguous-dir"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 2 "holds 9 counterexamples" --
                 $<TARGET_FILE:attnprop_cli> replay ${_ctl_out})
set_tests_properties("golden: cli replay-ambiguous-dir" PROPERTIES LABELS golden
                     FIXTURES_REQUIRED controls_report)
attnprop_cli_test(check-semantics-passes 0 "semantics/leftmost-tie-rule +passed"
                  check --suite semantics --tests 20 --max-n 16 --out ${CMAKE_CURRENT_BINARY_DIR}/golden-semantics)
attnprop_cli_test(check-list 0 "controls/double-equals-exact +\\(control\\)" check --list)
attnprop_cli_test(check-unknown-suite 2 "unknown suite 'nope'" check --suite nope)
attnprop_cli_test(check-unknown-property 2 "unknown property 'x/y'" check --property x/y)
attnprop_cli_test(check-bad-cap 2 "precision-cap must be at least" check --precision 512 --precision-cap 256)
attnprop_cli_test(replay-missing 2 "not a counterexample folder" replay /nonexistent-attnprop-dir)

# restrict: Hahn's restriction, its certificate and language counterexamples.
attnprop_cli_test(restrict-parity-64 0 "parity: counterexample found"
                  restrict --model hard-parity-attempt --n 64 --language parity)
attnprop_cli_test(restrict-parity-misclassified 0 "<- misclassified"
                  restrict --model hard-parity-attempt --n 64 --language parity)
attnprop_cli_test(restrict-parity-certificate 0 "^certificate +valid"
                  restrict --model hard-parity-attempt --n 1024 --language parity --samples 8)
attnprop_cli_test(restrict-parity-1024 0 "parity: counterexample found"
                  restrict --model hard-parity-attempt --n 1024 --language parity --samples 8)
# These write their language counterexamples into the default folders
# out/restrict-hard-parity-attempt-1-n64 and -n1024 (one per n; the same options, --json
# aside): one at a time.
foreach(_t restrict-parity-64 restrict-parity-misclassified restrict-parity-certificate
           restrict-parity-1024)
  set_tests_properties("golden: cli ${_t}" PROPERTIES RESOURCE_LOCK restrict_default_out)
endforeach()
attnprop_cli_test(restrict-first-not-ruled-out 0 "first: language not ruled out"
                  restrict --model hard-first --n 64 --language first)
attnprop_cli_test(restrict-first-c-obs 0 "c_obs +1 +D_L\\(n\\) = \\{1\\}" restrict --model hard-first --n 64)
attnprop_cli_test(restrict-contains-one 0 "contains-one: language not ruled out"
                  restrict --model hard-contains-one --n 64 --language contains-one)
set(_rcx_out ${CMAKE_CURRENT_BINARY_DIR}/golden-restrict-cx)
add_test(NAME "golden: cli restrict-writes-language-counterexample"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 0 "language counterexample written to" --
                 $<TARGET_FILE:attnprop_cli> restrict --model hard-parity-attempt --n 64
                 --language parity --out ${_rcx_out})
set_tests_properties("golden: cli restrict-writes-language-counterexample" PROPERTIES
                     LABELS golden FIXTURES_SETUP restrict_cx
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
add_test(NAME "golden: cli replay-language-counterexample"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "misclassifies a parity input" --
                 $<TARGET_FILE:attnprop_cli> replay ${_rcx_out}/language-counterexample-n64)
set_tests_properties("golden: cli replay-language-counterexample" PROPERTIES LABELS golden
                     FIXTURES_REQUIRED restrict_cx)
attnprop_cli_test(restrict-json-counterexample 0 "\"wrong\": [01]"
                  restrict --model hard-parity-attempt --n 64 --language parity --json)
attnprop_cli_test(restrict-json-certificate 0 "\"certificate\": \"valid\""
                  restrict --model hard-parity-attempt --n 64 --language parity --json)
attnprop_cli_test(restrict-json-dependency 0 "\"dependency\": \\["
                  restrict --model hard-first --n 16 --json)
foreach(_t restrict-json-counterexample restrict-json-certificate)
  set_tests_properties("golden: cli ${_t}" PROPERTIES RESOURCE_LOCK restrict_default_out)
endforeach()
attnprop_cli_test(restrict-json-rho 0 "\"rho\": \"1\\*+\""
                  restrict --model hard-contains-one --n 16 --json)
attnprop_cli_test(restrict-sweep 0 "trend: c_obs changes by 0 per doubling"
                  restrict --model hard-parity-attempt --n 16:256:x4 --language parity
                  --out ${CMAKE_CURRENT_BINARY_DIR}/golden-restrict)
set_tests_properties("golden: cli restrict-sweep" PROPERTIES FIXTURES_SETUP restrict_sweep)
# --out: another --n is refused; the same options (--threads does not count) rewrite the report.
attnprop_cli_test(restrict-out-refused 2
                  "golden-restrict holds a report made with --n 16:256:x4; this run has --n 16:64:x4: use --out DIR or --force to replace it"
                  restrict --model hard-parity-attempt --n 16:64:x4 --language parity
                  --out ${CMAKE_CURRENT_BINARY_DIR}/golden-restrict)
set_tests_properties("golden: cli restrict-out-refused" PROPERTIES FIXTURES_REQUIRED restrict_sweep)
attnprop_cli_test(restrict-out-same-options 0 "report: .*golden-restrict/report.md"
                  restrict --model hard-parity-attempt --n 16:256:x4 --language parity --threads 1
                  --out ${CMAKE_CURRENT_BINARY_DIR}/golden-restrict)
set_tests_properties("golden: cli restrict-out-same-options" PROPERTIES
                     FIXTURES_REQUIRED restrict_sweep DEPENDS "golden: cli restrict-out-refused")
attnprop_cli_test(restrict-unknown-language 2 "unknown language 'klingon'"
                  restrict --model hard-first --n 16 --language klingon)
attnprop_cli_test(restrict-n-too-small 2 "n must be at least 2" restrict --model hard-first --n 1)
attnprop_cli_test(restrict-bad-range 2 "FROM:TO:xFACTOR" restrict --model hard-first --n 16:64)
attnprop_cli_test(restrict-c-one 2 "strictly between 0 and 1"
                  restrict --model hard-first --n 16 --free-fraction 1)
attnprop_cli_test(restrict-c-zero 2 "strictly between 0 and 1"
                  restrict --model hard-first --n 16 --free-fraction 0)
attnprop_cli_test(restrict-c-garbage 2 "is not a number"
                  restrict --model hard-first --n 16 --free-fraction half)
attnprop_cli_test(restrict-alphabet 2 "does not contain the 1dyck symbol"
                  restrict --model hard-first --n 17 --language 1dyck)
attnprop_cli_test(restrict-soft-model 2 "needs a hard-attention model"
                  restrict --model cc-parity --n 8)

# bound: the hypotheses of Lemma 5 and the explicit constant K (docs/bounds.md).
attnprop_cli_test(bound-cc-parity 0 "verdict: Lemma 5 applies: influence <= K/n with K = [0-9]" bound --model cc-parity)
attnprop_cli_test(bound-cc-parity-json 0 "\"K\": \"[0-9.e+]+\"" bound --model cc-parity --json)
attnprop_cli_test(bound-cc-parity-n 0 "at n = 1000: K\\(n\\) = [0-9.e+]+, delta_L\\(n\\) = K\\(n\\)/n" bound --model cc-parity --n 1000)
attnprop_cli_test(bound-ln0-json 0 "\"K\": null" bound --model cc-parity-ln0 --json)
attnprop_cli_test(bound-ln0-text 0 "lipschitz-updates +no +layer 1 update: layer norm with eps = 0 is not Lipschitz" bound --model cc-parity-ln0)
# StableMax keeps Lemma 5 with a smaller E (theory.md 2.6); sparsemax has no bound of its own.
attnprop_cli_test(bound-stablemax 0 "stablemax attention: .*bounds its influence too" bound --model stablemax-first --no-every-n)
attnprop_cli_test(bound-sparsemax 0 "verdict: no bound for sparsemax attention: one symbol's influence need not vanish" bound --model sparsemax-first --no-every-n)
# 1.5-entmax: no bound of its own either, and its threshold is irrational: exact refuses it.
attnprop_cli_test(bound-entmax15 0 "verdict: no bound for entmax15 attention: one symbol's influence need not vanish" bound --model entmax15-first --no-every-n)
attnprop_cli_test(eval-entmax15-exact-refused 2 "cannot evaluate this model \\(attention is entmax15 \\(1\\.5-entmax's threshold needs a square root\\)\\).*at /attention"
                  eval --model entmax15-first --input 1000 --scalar exact)
# Softpick: no bound of its own, exp refused by exact; a row without a positive score is 0, a
# defined value (softpick-any on an input without a 1), not undefined.
attnprop_cli_test(bound-softpick 0 "verdict: no bound for softpick attention: one symbol's influence need not vanish" bound --model softpick-any --no-every-n)
attnprop_cli_test(eval-softpick-exact-refused 2 "cannot evaluate this model \\(attention is softpick \\(softpick needs exp\\)\\).*at /attention"
                  eval --model softpick-any --input 1000 --scalar exact)
attnprop_cli_test(eval-softpick-zero-row 0 "\"y\": \\[\"0\", \"0\\.20*1?\", \"1\"\\]" eval --model softpick-any --input 0000 --scalar double --json)
attnprop_cli_test(check-softpick-soft-refused 0 "soft-influence/influence-vanishes: needs a soft-attention model; the model is softpick \\(its statement and bounds are derived for softmax; softpick weighs a key of score 0 by exactly 0"
                  check --model softpick-any --suite soft-influence --out ${CMAKE_CURRENT_BINARY_DIR}/golden-softpick-check --force)
# Linear attention: the law follows the feature map (elu1 O(1/n), no constant; linear-sum none);
# relu features exact, elu1 refused by exact at its layer; a normalised row of relu features
# summing to 0 is undefined (exit 4), in every scalar kind; the soft lemma's properties refused.
attnprop_cli_test(bound-linear-elu1 0 "verdict: no explicit bound for linear-normalised attention: with elu1 features one symbol's influence is O\\(1/n\\)" bound --model linear-elu1-first --no-every-n)
attnprop_cli_test(bound-linear-sum 0 "verdict: no bound for linear-sum attention: one symbol's influence need not vanish" bound --model linear-sum-count --no-every-n)
attnprop_cli_test(eval-linear-elu1-exact-refused 2 "layer 1: linear-normalised attention's feature map elu1 needs exp.*at /layers/0/feature_map"
                  eval --model linear-elu1-first --input 1000 --scalar exact)
attnprop_cli_test(eval-linear-sum-exact-y 0 "\"y\": \\[\"3\", \"1/6\", \"1\"\\]" eval --model linear-sum-count --input 01101 --scalar exact --json)
foreach(_s exact double mpfr interval ball)
  attnprop_cli_test(eval-linear-zero-row-${_s} 4 "undefined at layer 1, node 'linear-normalised', head 1, position 4 \\(linear attention's row sum"
                    eval --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/undefined/linear-relu-zero.json --input 000 --scalar ${_s})
endforeach()
attnprop_cli_test(check-linear-soft-refused 0 "soft-influence/influence-vanishes: needs a soft-attention model; the model is linear-normalised \\(its statement and bounds are derived for softmax; linear attention with elu1 features"
                  check --model linear-elu1-first --suite soft-influence --out ${CMAKE_CURRENT_BINARY_DIR}/golden-linear-check --force)
attnprop_cli_test(eval-sparsemax-exact 0 "\"scalar\": \"exact\"" eval --model sparsemax-first --input 1000 --json)
attnprop_cli_test(eval-stablemax-exact-y 0 "\"y\": \\[\"90/287\", \"2/5\", \"1\"\\]" eval --model stablemax-first --input 1000 --json)
attnprop_cli_test(check-sparsemax-soft-refused 0 "soft-influence/influence-vanishes: needs a soft-attention model; the model is sparsemax \\(its statement and bounds are derived for softmax; sparsemax is exactly one-hot"
                  check --model sparsemax-first --suite soft-influence --out ${CMAKE_CURRENT_BINARY_DIR}/golden-sparsemax-check --force)
# Sigmoid attention (theory.md 2.6): the law follows the bias; no constant either way; the
# exact scalar refused; the soft lemma's properties refused with the law in words.
attnprop_cli_test(bound-sigmoid-const 0 "verdict: no bound for sigmoid attention: with a bias independent of n one symbol's influence need not vanish" bound --model sigmoid-const --no-every-n)
attnprop_cli_test(bound-sigmoid-logn 0 "verdict: no explicit bound for sigmoid attention: with the bias -log\\(n\\) \\+ c one symbol's influence is O\\(1/n\\)" bound --model sigmoid-logn --no-every-n)
attnprop_cli_test(eval-sigmoid-exact-refused 2 "sigmoid needs exp" eval --model sigmoid-const --input 1000 --scalar exact)
attnprop_cli_test(eval-sigmoid-auto 0 "\"scalar\": \"interval\"" eval --model sigmoid-logn --input 1000 --json)
attnprop_cli_test(check-sigmoid-logn-soft-refused 0 "soft-influence/influence-vanishes: needs a soft-attention model; the model is sigmoid \\(its statement and bounds are derived for softmax; sigmoid weights with the bias -log\\(n\\) \\+ c"
                  check --model sigmoid-logn --suite soft-influence --out ${CMAKE_CURRENT_BINARY_DIR}/golden-sigmoid-check --force)
attnprop_cli_test(bound-ln0-verdict 0 "verdict: Lemma 5 does not apply: lipschitz-updates fails" bound --model cc-parity-ln0)
# bound over every input (docs/bounds.md, "Every input, every n"): per n, K* for every n, and
# no K* with the reason when a positional coordinate grows with n.
attnprop_cli_test(bound-every-input 0 "every n: n \\* influence <= K\\* = 1\\.5[0-9]* for every n >= 2"
                  bound --model cc-first --n 64,1024)
attnprop_cli_test(bound-every-input-row 0 "1024 +[0-9]+ +0\\.00146[0-9]* +1\\.503[0-9]*"
                  bound --model cc-first --n 1024 --no-every-n)
attnprop_cli_test(bound-every-input-json 0 "\"K_star\": \"1\\.5[0-9]*\"" bound --model cc-first --json)
attnprop_cli_test(bound-every-input-none 0 "every n: no K\\* \\(the positional embedding is unbounded"
                  bound --model soft-positional-i)
attnprop_cli_test(bound-every-input-bad-n 2 "--n" bound --model cc-first --n 1,16)
attnprop_cli_test(bound-missing-model 2 "--model" bound)
attnprop_cli_test(bound-bad-n 2 "--n" bound --model cc-parity --n 0)
attnprop_cli_test(bound-unknown-model 2 "no model file or bundled model named 'nope'" bound --model nope)

# influence: one-symbol influence across n (Lemma 5), reports, resume, counterexamples.
set(_inf_out ${CMAKE_CURRENT_BINARY_DIR}/golden-influence)
attnprop_cli_test(influence-json-passed 0 "\"verdict\": \"passed\""
                  influence --model cc-first.json --n 8,16,32 --json --out ${_inf_out}/json)
attnprop_cli_test(influence-json-fields 0 "\"n_max_influence\": \"[0-9]"
                  influence --model cc-first.json --n 8,16,32 --json --out ${_inf_out}/json2)
attnprop_cli_test(influence-json-posterior 0 "\"posterior_bound\": \"[0-9]"
                  influence --model cc-first.json --n 8,16 --json --out ${_inf_out}/json3)
attnprop_cli_test(influence-json-slope 0 "\"slope_stderr\": [0-9]"
                  influence --model cc-first.json --n 8,16,32 --json --out ${_inf_out}/json4)
attnprop_cli_test(influence-ce 0 "\"mean_ce_bits\": \"0\\.9"
                  influence --model cc-parity --n 8,16 --language parity --json --out ${_inf_out}/ce)
attnprop_cli_test(influence-search 0 "worst-case search: 8 inputs per n"
                  influence --model cc-first --n 8,16 --inputs 1 --positions 2 --search 8 --out ${_inf_out}/search)
# report.md carries the search's table (its verdict is part of the exit code).
add_test(NAME "golden: cli influence-search-report-md"
         COMMAND sh -c "\"$1\" influence --model cc-first --n 8,16 --inputs 1 --positions 2 --search 8 --out \"$2\" --force > /dev/null && grep -q '^## Worst-case search' \"$2/report.md\" && grep -q '^| 16 | [0-9]' \"$2/report.md\""
                 sh $<TARGET_FILE:attnprop_cli> ${_inf_out}/search-md)
set_tests_properties("golden: cli influence-search-report-md" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
attnprop_cli_test(influence-ln0 0 "verdict: not-applicable .*lipschitz-updates"
                  influence --model cc-parity-ln0 --n 8,16 --out ${_inf_out}/ln0)
attnprop_cli_test(influence-bad-n 2 "--n: 'x' is not an integer"
                  influence --model cc-first --n 8,x)
attnprop_cli_test(influence-bad-range 2 "--n: a range is FROM:TO:xFACTOR"
                  influence --model cc-first --n 8:64)
attnprop_cli_test(influence-n-too-small 2 "--n: n must be at least 2"
                  influence --model cc-first --n 1,8)
attnprop_cli_test(influence-hard-model 2 "influence needs attention that weighs every key; hard-first is hard"
                  influence --model hard-first --n 8)
# Every kind that weighs every key is measured; only the bounds of its own kind are compared.
attnprop_cli_test(influence-sparsemax-grows 0 "verdict: not-applicable \\(the model uses sparsemax attention: .*no bound is compared; n \\* max influence certainly grew"
                  influence --model sparsemax-first --n 8,32 --inputs 2 --positions 2 --out ${_inf_out}/sparsemax)
attnprop_cli_test(influence-sigmoid-const-grows 0 "verdict: not-applicable \\(the model uses sigmoid attention: .*certainly grew"
                  influence --model sigmoid-const --n 8,32 --inputs 2 --positions 2 --out ${_inf_out}/sigmoid)
attnprop_cli_test(influence-stablemax-a-priori 0 "verdict: passed"
                  influence --model stablemax-first --n 8,16 --inputs 2 --positions 2 --out ${_inf_out}/stablemax)
attnprop_cli_test(influence-search-softmax-only 2 "--search: the worst-case search maximises softmax's"
                  influence --model sparsemax-first --n 8 --search 4 --out ${_inf_out}/sparsemax-search)
attnprop_cli_test(influence-unknown-language 2 "unknown language 'klingon'"
                  influence --model cc-first --n 8 --language klingon)
attnprop_cli_test(influence-bad-positions 2 "--positions"
                  influence --model cc-first --n 8 --positions none)
# --out writes the report files; a second run with the same options reuses every row.
add_test(NAME "golden: cli influence-out-files"
         COMMAND sh -c "rm -rf '${_inf_out}/files' && '$<TARGET_FILE:attnprop_cli>' influence --model cc-first --n 8,16 --out '${_inf_out}/files' >/dev/null && for f in report.json report.md influence.csv influence.svg rows.json; do test -s '${_inf_out}/files/'$f || { echo missing $f; exit 1; }; done && head -1 '${_inf_out}/files/influence.csv' | grep -q '^n,inputs,positions,pairs,max_influence'")
set_tests_properties("golden: cli influence-out-files" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models"
                     FIXTURES_SETUP influence_files)
attnprop_cli_test(influence-resume 0 "reused 2 rows"
                  influence --model cc-first --n 8,16 --out ${_inf_out}/files)
set_tests_properties("golden: cli influence-resume" PROPERTIES FIXTURES_REQUIRED influence_files)
# Other options than the folder's report: refused (exit 2) unless --force; then the folder
# holds the new report and resumes with the new options.
attnprop_cli_test(influence-resume-other-seed 2
                  "golden-influence/files holds an influence report made with --seed 1; this run has --seed 2: use --out DIR or --force to replace it"
                  influence --model cc-first --n 8,16 --seed 2 --out ${_inf_out}/files)
set_tests_properties("golden: cli influence-resume-other-seed" PROPERTIES
                     FIXTURES_REQUIRED influence_files DEPENDS "golden: cli influence-resume")
attnprop_cli_test(influence-resume-force 0
                  "--force: replacing the influence report in .*golden-influence/files made with --seed 1; this run has --seed 2"
                  influence --model cc-first --n 8,16 --seed 2 --force --out ${_inf_out}/files)
set_tests_properties("golden: cli influence-resume-force" PROPERTIES
                     FIXTURES_REQUIRED influence_files DEPENDS "golden: cli influence-resume-other-seed")
attnprop_cli_test(influence-resume-after-force 0 "reused 2 rows"
                  influence --model cc-first --n 8,16 --seed 2 --threads 1 --out ${_inf_out}/files)
set_tests_properties("golden: cli influence-resume-after-force" PROPERTIES
                     FIXTURES_REQUIRED influence_files DEPENDS "golden: cli influence-resume-force")
# A resumed sweep (after a run over a prefix of --n, after kill -9, over an edited rows.json)
# writes the same report files as an uninterrupted one, byte for byte.
add_test(NAME "golden: cli influence-resume-same-report"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/resume_same_report.sh $<TARGET_FILE:attnprop_cli>
                 ${_inf_out}/resume-same)
set_tests_properties("golden: cli influence-resume-same-report" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
# check and restrict killed after their first unit (ATTNPROP_KILL_AFTER_UNITS) resume from
# units.journal to the report folder of an uninterrupted run, byte for byte; a torn or changed
# last record is ignored, never misread.
foreach(_mode check restrict damaged)
  add_test(NAME "golden: cli journal-resume ${_mode}"
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/journal_resume.sh $<TARGET_FILE:attnprop_cli>
                   ${CMAKE_CURRENT_BINARY_DIR}/journal-resume-${_mode} ${_mode})
  set_tests_properties("golden: cli journal-resume ${_mode}" PROPERTIES LABELS golden TIMEOUT 60
                       ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
endforeach()
# The negative control fails (exit 1) and its counterexample replays as violated (exit 1).
add_test(NAME "golden: cli influence-fails"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "counterexample written to" --
                 $<TARGET_FILE:attnprop_cli> influence --model cc-first --n 8,16 --bound-divisor 1000000000
                 --out ${_inf_out}/fails)
set_tests_properties("golden: cli influence-fails" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models"
                     FIXTURES_SETUP influence_fails)
add_test(NAME "golden: cli influence-replay"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "verdict +failed" --
                 $<TARGET_FILE:attnprop_cli> replay ${_inf_out}/fails/counterexample-n8)
set_tests_properties("golden: cli influence-replay" PROPERTIES LABELS golden
                     FIXTURES_REQUIRED influence_fails)
# The cross-entropy floor with eta / 4 on the confident eps = 0 model: the sweep fails on the
# enumerated cube and writes a folder that replays through cross-entropy-above-chance.
add_test(NAME "golden: cli influence-ce-fails"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "counterexample written to" --
                 $<TARGET_FILE:attnprop_cli> influence --model cc-parity-ln0 --n 8 --language parity
                 --bound-divisor 4 --out ${_inf_out}/ce-fails)
set_tests_properties("golden: cli influence-ce-fails" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models"
                     FIXTURES_SETUP influence_ce_fails)
add_test(NAME "golden: cli influence-ce-replay"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "verdict +failed at 128 bits: the mean PARITY cross-entropy" --
                 $<TARGET_FILE:attnprop_cli> replay ${_inf_out}/ce-fails/counterexample-n8)
set_tests_properties("golden: cli influence-ce-replay" PROPERTIES LABELS golden
                     FIXTURES_REQUIRED influence_ce_fails)
# The 2DYCK forced-bracket floor with eta / 10^6 (no a-posteriori bound, so only the
# cross-entropy fails): the folder replays through forced-bracket-cross-entropy.
add_test(NAME "golden: cli influence-dyck2-ce-fails"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "verdict: failed .the cross-entropy over the 2DYCK forced-bracket pairs is below" --
                 $<TARGET_FILE:attnprop_cli> influence --model soft-recency-2dyck --n 16 --language 2dyck
                 --inputs 8 --bound-divisor 1000000 --posterior-max-n 0 --out ${_inf_out}/dyck2-fails)
set_tests_properties("golden: cli influence-dyck2-ce-fails" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models"
                     FIXTURES_SETUP influence_dyck2_fails)
add_test(NAME "golden: cli influence-dyck2-ce-replay"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh 1 "verdict +failed at 128 bits: the mean cross-entropy over the forced-bracket pairs" --
                 $<TARGET_FILE:attnprop_cli> replay ${_inf_out}/dyck2-fails/counterexample-n16)
set_tests_properties("golden: cli influence-dyck2-ce-replay" PROPERTIES LABELS golden
                     FIXTURES_REQUIRED influence_dyck2_fails)
# The negative controls of Lemma 5, one per hypothesis: hypothesis-violated, named, and a
# certified growth of n * influence (the rate is only a measurement).
attnprop_cli_test(influence-logn 0 "verdict: not-applicable .hypotheses fail: dot-product-scores, so Lemma 5 makes no claim; n . max influence certainly grew from"
                  influence --model cc-first-logn --n 16,32,64 --out ${_inf_out}/logn)
# The bound over every input decides the cross-entropy corollary at every n (sampled rows too).
attnprop_cli_test(influence-certified-floor 0 "n = 1000: .*so CE >= 0\\.99[0-9]* \\(passed: certified floor\\)"
                  influence --model cc-parity --n 100,1000 --inputs 1 --positions 2 --language parity
                  --out ${_inf_out}/certified-floor --force)
attnprop_cli_test(influence-certified-verdict 0 "decided at every n by the floor"
                  influence --model cc-parity --n 100,1000 --inputs 1 --positions 2 --language parity
                  --out ${_inf_out}/certified-floor2 --force)
attnprop_cli_test(influence-positional-i 0 "verdict: not-applicable .hypotheses fail: bounded-embeddings, bounded-initial-states, so Lemma 5 makes no claim; n . max influence certainly grew from"
                  influence --model soft-positional-i --n 16,32,64 --out ${_inf_out}/posi)
attnprop_cli_test(influence-step 0 "verdict: not-applicable .hypotheses fail: lipschitz-updates, so Lemma 5 makes no claim; n . max influence certainly grew from"
                  influence --model soft-step-update --n 16,32,64 --out ${_inf_out}/step)
attnprop_cli_test(bound-logn 0 "verdict: Lemma 5 does not apply: dot-product-scores fails"
                  bound --model cc-first-logn)

# Undefined results (exit 4), located, for every scalar kind: soft-majority-ln0 at a tie (layer
# norm with eps = 0 at zero variance), a hard model with the same layer norm on the empty input,
# and a hard model whose positional formula 1/(i-2) has a pole (the exact scalar).
set(_undef ${CMAKE_CURRENT_SOURCE_DIR}/golden/undefined)
foreach(_s double mpfr ball)
  attnprop_cli_test(eval-undefined-${_s} 4
                    "^result +undefined at layer 1, node 'norm', position 3 \\(layer norm with eps = 0 at zero variance\\)$"
                    eval --model soft-majority-ln0 --input 01 --scalar ${_s})
  attnprop_cli_test(eval-undefined-${_s}-json 4
                    "\"message\": \"undefined at layer 1, node 'norm', position 5 \\(layer norm"
                    eval --model soft-majority-ln0 --input 0110 --scalar ${_s} --json)
  attnprop_cli_test(eval-undefined-hard-ln0-${_s} 4
                    "^result +undefined at layer 1, node 'norm', position 1 \\(layer norm with eps = 0 at zero variance\\)$"
                    eval --model ${_undef}/hard-ln0.json --input= --scalar ${_s})
  attnprop_cli_test(influence-undefined-${_s} 4
                    "verdict: undefined \\(the model is undefined at n = 3: undefined at layer 1, node 'norm', position 3"
                    influence --model soft-majority-ln0 --n 3,4,6 --inputs 2 --scalar ${_s}
                    --out ${_inf_out}/undefined-${_s})
endforeach()
attnprop_cli_test(eval-undefined-exact 4
                  "^result +undefined at layer 0, node 'positional embedding', position 2 \\(division by zero in formula '1/\\(i-2\\)' at i=2, n=3\\)$"
                  eval --model ${_undef}/hard-pole.json --input 01 --scalar exact)
attnprop_cli_test(eval-undefined-exact-json 4 "\"node\": \"positional embedding\""
                  eval --model ${_undef}/hard-pole.json --input 01 --json)
attnprop_cli_test(eval-undefined-ball-may-resolve 4 "a higher --precision may resolve it"
                  eval --model cc-parity-ln0 --input= --scalar ball)
attnprop_cli_test(eval-defined-majority 0 "P\\(next\\) +0: 0.1192.*, 1: 0.8808"
                  eval --model soft-majority-ln0 --input 011 --digits 4)
attnprop_cli_test(influence-undefined-json 4 "\"verdict\": \"undefined\""
                  influence --model soft-majority-ln0 --n 3,4 --inputs 2 --json --out ${_inf_out}/undefined-json)
add_test(NAME "golden: cli influence-undefined-files"
         COMMAND sh ${_undef}/influence_files.sh $<TARGET_FILE:attnprop_cli> ${_inf_out}/undefined-files)
set_tests_properties("golden: cli influence-undefined-files" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")
attnprop_cli_test(replay-undefined 4
                  "verdict +undefined at 128 bits: undefined at layer 1, node 'norm', position 5 \\(layer norm with eps = 0 at zero variance\\)"
                  replay ${_undef}/replay-tie)

# --out and --force for check (docs/cli.md): a report made with other options is refused,
# the same options (--json does not count) rewrite it, --force replaces it, and a folder that
# holds no attnprop report is refused unless empty; --force then leaves its other files.
set(_out ${CMAKE_CURRENT_BINARY_DIR}/golden-out)
set(_small --tests 5 --max-n 8)
attnprop_cli_test(check-out-first 0 "semantics/leftmost-tie-rule +passed"
                  check --property semantics/leftmost-tie-rule ${_small} --out ${_out}/check)
set_tests_properties("golden: cli check-out-first" PROPERTIES FIXTURES_SETUP out_check)
attnprop_cli_test(check-out-refused 2
                  "golden-out/check holds a report made with --property semantics/leftmost-tie-rule; this run has --property semantics/trace-last-row: use --out DIR or --force to replace it"
                  check --property semantics/trace-last-row ${_small} --out ${_out}/check)
set_tests_properties("golden: cli check-out-refused" PROPERTIES FIXTURES_REQUIRED out_check)
attnprop_cli_test(check-out-same-options 0 "\"status\": \"passed\""
                  check --property semantics/leftmost-tie-rule ${_small} --json --out ${_out}/check)
set_tests_properties("golden: cli check-out-same-options" PROPERTIES FIXTURES_REQUIRED out_check
                     DEPENDS "golden: cli check-out-refused")
attnprop_cli_test(check-out-force 0
                  "--force: replacing the check report in .*golden-out/check made with --property semantics/leftmost-tie-rule; this run has --property semantics/trace-last-row"
                  check --property semantics/trace-last-row ${_small} --force --out ${_out}/check)
set_tests_properties("golden: cli check-out-force" PROPERTIES FIXTURES_REQUIRED out_check
                     DEPENDS "golden: cli check-out-same-options")
attnprop_cli_test(check-out-after-force 2
                  "golden-out/check holds a report made with --property semantics/trace-last-row; this run has --property semantics/leftmost-tie-rule"
                  check --property semantics/leftmost-tie-rule ${_small} --out ${_out}/check)
set_tests_properties("golden: cli check-out-after-force" PROPERTIES FIXTURES_REQUIRED out_check
                     DEPENDS "golden: cli check-out-force")
add_test(NAME "golden: cli check-out-foreign-folder"
         COMMAND sh -c "mkdir -p \"$1\" && echo mine > \"$1/notes.txt\" && exec sh \"$2\" 2 \"is not empty and holds no attnprop check report: use --out DIR, or --force to write into it\" -- \"$3\" check --property semantics/leftmost-tie-rule --tests 5 --max-n 8 --out \"$1\""
                 sh ${_out}/foreign ${CMAKE_CURRENT_SOURCE_DIR}/golden/expect.sh $<TARGET_FILE:attnprop_cli>)
set_tests_properties("golden: cli check-out-foreign-folder" PROPERTIES LABELS golden
                     FIXTURES_SETUP out_foreign)
add_test(NAME "golden: cli check-out-force-foreign-folder"
         COMMAND sh -c "\"$2\" check --property semantics/leftmost-tie-rule --tests 5 --max-n 8 --force --out \"$1\" >/dev/null 2>&1 && test -f \"$1/notes.txt\" && test -f \"$1/report.json\""
                 sh ${_out}/foreign $<TARGET_FILE:attnprop_cli>)
set_tests_properties("golden: cli check-out-force-foreign-folder" PROPERTIES LABELS golden
                     FIXTURES_REQUIRED out_foreign)
# Same options, two folders: byte-identical report.json and report.md once the provenance
# (which names the other --out) is taken out; the counterexample case.json files too.
add_test(NAME "golden: cli same-options-same-report"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/same_report.sh $<TARGET_FILE:attnprop_cli>
                 ${_out}/same)
set_tests_properties("golden: cli same-options-same-report" PROPERTIES LABELS golden
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")

# --out is tested before the work; a report that cannot be written after it keeps the results
# and the exit code (tests/golden/out_checks.sh).
add_test(NAME "golden: cli out-checked-before-the-work"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/out_checks.sh $<TARGET_FILE:attnprop_cli>
                 ${CMAKE_CURRENT_BINARY_DIR}/golden-out-checks)
set_tests_properties("golden: cli out-checked-before-the-work" PROPERTIES LABELS golden
                     SKIP_RETURN_CODE 77
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")

# The README tour, top to bottom, with small budgets: no command refuses or replaces another's
# report, the replay paths exist, the exit codes are the ones the comments name.
add_test(NAME "golden: readme tour"
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/golden/readme_tour.sh ${PROJECT_SOURCE_DIR}/README.md
                 $<TARGET_FILE:attnprop_cli> ${CMAKE_CURRENT_BINARY_DIR}/golden-readme-tour)
set_tests_properties("golden: readme tour" PROPERTIES LABELS golden TIMEOUT 300
                     ENVIRONMENT "ATTNPROP_MODELS_DIR=${PROJECT_SOURCE_DIR}/models")

# Report folders of the golden tests are removed first, so that reports left by an earlier
# attnprop, or by other options, never meet the --out refusal: every "golden: cli" test needs
# this fixture (appended to whatever fixtures it has).
add_test(NAME "golden: clean report folders"
         COMMAND ${CMAKE_COMMAND} -E rm -rf ${CMAKE_CURRENT_BINARY_DIR}/golden-controls
                 ${CMAKE_CURRENT_BINARY_DIR}/golden-semantics ${CMAKE_CURRENT_BINARY_DIR}/golden-restrict
                 ${CMAKE_CURRENT_BINARY_DIR}/golden-restrict-cx ${_inf_out} ${_out}
                 ${CMAKE_CURRENT_BINARY_DIR}/out)
set_tests_properties("golden: clean report folders" PROPERTIES LABELS golden FIXTURES_SETUP golden_clean)
get_property(_golden_tests DIRECTORY PROPERTY TESTS)
foreach(_t IN LISTS _golden_tests)
  if(_t MATCHES "^golden: cli ")
    get_test_property("${_t}" FIXTURES_REQUIRED _fx)
    if(NOT _fx)
      set(_fx "")
    endif()
    list(APPEND _fx golden_clean)
    set_tests_properties("${_t}" PROPERTIES FIXTURES_REQUIRED "${_fx}")
  endif()
endforeach()

# simulate over every input (theory.md 4.5): the margin 1/2000, the input on the threshold, and
# the beta every input off it needs; a tie of keys of different values (hard-first).
attnprop_cli_test(simulate-every-input-margin 0 "smallest margin 1/2000 \\(attained\\)"
                  simulate --model hard-first-one-position --beta 100 --n 1000
                  --out ${CMAKE_CURRENT_BINARY_DIR}/golden-simulate-every --force)
attnprop_cli_test(simulate-every-input-beta 0 "for every input off the threshold .*: 2\\.76[0-9]e\\+04"
                  simulate --model hard-first-one-position --beta 100 --n 1000
                  --out ${CMAKE_CURRENT_BINARY_DIR}/golden-simulate-every2 --force)
attnprop_cli_test(simulate-every-input-no 0 "beta = 100: not certified for every input"
                  simulate --model hard-first-one-position --beta 100 --n 1000
                  --out ${CMAKE_CURRENT_BINARY_DIR}/golden-simulate-every3 --force)
attnprop_cli_test(simulate-every-input-tie 0 "keys 1 and 2 tie with different values"
                  simulate --model hard-first --beta 100 --n 16
                  --out ${CMAKE_CURRENT_BINARY_DIR}/golden-simulate-every4 --force)
# simulate: a soft model, a formula with i and a beta that is not positive are bad usage.
attnprop_cli_test(simulate-soft-model 2 "simulate needs a hard or average-hard model" simulate --model cc-first --beta 4 --n 16)
attnprop_cli_test(simulate-beta-with-i 2 "is a formula in n alone" simulate --model hard-contains-one --beta "i" --n 16)
attnprop_cli_test(simulate-beta-not-positive 2 "is not certainly positive at n = 2" simulate --model hard-contains-one --beta "log(n)-1" --n 2,16)
attnprop_cli_test(simulate-restrict-average 2 "average-hard" restrict --model average-ones-mean --n 8)

# The exact gelu and erf ops: every real kind evaluates them, exact refuses them, bound
# composes their Lipschitz constants.
set(_gelu ${CMAKE_CURRENT_SOURCE_DIR}/data/ffn-gelu.json)
attnprop_cli_test(eval-gelu-ball 0 "P.next. +0: 0\\.13346385798394980381.*1: 0\\.86653614201605019618" eval --model ${_gelu} --input 0110 --scalar ball)
attnprop_cli_test(eval-gelu-interval 0 "\"scalar\": \"interval\"" eval --model ${_gelu} --input 0110 --scalar interval --json)
attnprop_cli_test(eval-gelu-mpfr 0 "P.next. +0: 0\\.133463857983949803814" eval --model ${_gelu} --input 0110 --scalar mpfr)
attnprop_cli_test(eval-gelu-double 0 "P.next. +0: 0\\.133463857983949" eval --model ${_gelu} --input 0110 --scalar double)
attnprop_cli_test(eval-gelu-exact-refused 2 "cannot evaluate this model .layer 1 update: gelu" eval --model ${CMAKE_CURRENT_SOURCE_DIR}/data/ffn-gelu-hard.json --input 01 --scalar exact)
attnprop_cli_test(bound-gelu 0 "lipschitz-updates +yes" bound --model ${_gelu})

# format: the canonical form, a fixed point; bad files are exit 2.
attnprop_cli_test(format-bundled 0 "^  \"name\": \"hard-first\",$" format --model hard-first)
attnprop_cli_test(format-gelu 0 "\"op\": \"gelu\"" format --model ${_gelu})
attnprop_cli_test(format-bad 2 "q_cols_mismatch.json:16:41: error: Q has 3 columns" format --model ${CMAKE_CURRENT_SOURCE_DIR}/golden/bad_inputs/q_cols_mismatch.json)
attnprop_cli_test(format-help 0 "canonical form" format --help)

# plot: report folders of influence, simulate or restrict, all of one command; a folder without
# one, of another command, or folders of two commands are exit 2 with the file and the JSON
# pointer; never into another run's report folder.
attnprop_cli_test(plot-help 0 "Report folders of one command: influence, simulate or restrict" plot --help)
attnprop_cli_test(plot-no-dir 2 "dirs is required" plot)
attnprop_cli_test(plot-missing 2 "no-such-folder/report.json: error: a report folder holds report.json"
                  plot ${CMAKE_CURRENT_BINARY_DIR}/no-such-folder --out ${CMAKE_CURRENT_BINARY_DIR}/plot-missing)
attnprop_cli_test(plot-other-report 2 "check/report.json: error: plot draws the reports of .attnprop influence., .simulate. and .restrict.; this is a report of format 'attnprop-check-report' \\(at /format\\)"
                  plot ${CMAKE_CURRENT_SOURCE_DIR}/golden/plot/check --out ${CMAKE_CURRENT_BINARY_DIR}/plot-other)
attnprop_cli_test(plot-two-commands 2 "simulate/report.json: error: plot overlays the reports of one command; this is a report of .attnprop simulate., .*bad-row one of .attnprop influence. \\(at /format\\)"
                  plot ${CMAKE_CURRENT_SOURCE_DIR}/golden/plot/bad-row ${CMAKE_CURRENT_SOURCE_DIR}/golden/plot/simulate --out ${CMAKE_CURRENT_BINARY_DIR}/plot-two)
attnprop_cli_test(plot-bad-row 2 "bad-row/report.json: error: expected a length n >= 2 \\(at /rows/0/n\\)"
                  plot ${CMAKE_CURRENT_SOURCE_DIR}/golden/plot/bad-row --out ${CMAKE_CURRENT_BINARY_DIR}/plot-bad-row)
attnprop_cli_test(plot-into-an-input 2 "holds the report of another run; give plot another --out"
                  plot ${CMAKE_CURRENT_SOURCE_DIR}/golden/plot/check --out ${CMAKE_CURRENT_SOURCE_DIR}/golden/plot/check)
attnprop_cli_test(plot-bad-name 2 "--name: a file name without a folder" plot x --name a/b)
