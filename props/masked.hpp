#pragma once
/// @file masked.hpp
/// The properties of causally masked models (docs/model-format.md, "mask"), in the suites they
/// belong to:
/// - soft-influence/masked-influence-below-bound: for a soft model whose every layer is causal
///   and that satisfies the hypotheses of Claim 2, every measured one-symbol change moves
///   y_n^(L) by at most K (1 + ln n)^(L-1) / n (theory.md §2.5);
/// - hard-limit/masked-certificate-valid: props::certificate_valid on causally masked hard
///   models (theory.md §1.4), n up to 1024 (hard_limit.hpp);
/// - controls/masked-influence-hahn-rate (false on purpose): the same measurement against
///   Hahn's rate K/n without the log factor, on the witnesses of the masked rate.

#include "props/common.hpp"

namespace attnprop::props {

/// soft-influence/masked-influence-below-bound; with `drop_log_factor` the bound is K/n (the
/// negative control, registered as controls/masked-influence-hahn-rate on the witnesses).
runner::property masked_influence_below_bound(bool drop_log_factor = false);

void register_masked(runner::registry& r);

} // namespace attnprop::props
