#pragma once
/// @file kind_list.hpp
/// The one list of scalar kinds: every kind's header, and X-macros over the kinds a user can
/// name, one macro per kind of result. Everything that is done once per kind is made from
/// these lists: the type list numeric::user_kinds, `--scalar` parsing, names and help texts
/// (kinds.hpp), and every explicit instantiation of a kernel (`ATTNPROP_..._KINDS(X)` with X
/// a macro that instantiates it for one type). kinds.hpp checks each list against the kinds'
/// traits, so a kind in the wrong list does not compile. A new kind: its header here and in
/// the list of its kind of result (docs/architecture.md, "One place per scalar kind").

#include "numeric/arb_ball.hpp"
#include "numeric/diff_ball.hpp"
#include "numeric/dinterval.hpp"
#include "numeric/interval.hpp"
#include "numeric/mpfr_real.hpp"
#include "numeric/rational.hpp"

/// The user kinds whose values are the true values (no exp: soft models need one of the others).
#define ATTNPROP_EXACT_USER_KINDS(X) X(::attnprop::numeric::rational)
/// The user kinds that round (with exp).
#define ATTNPROP_ROUNDED_USER_KINDS(X) X(double) X(::attnprop::numeric::mpfr_real)
/// The user kinds that enclose the true value (with exp).
#define ATTNPROP_ENCLOSURE_USER_KINDS(X)                                                           \
    X(::attnprop::numeric::arb_ball) X(::attnprop::numeric::dinterval)

/// The user kinds with exp (what soft models run in).
#define ATTNPROP_EXP_USER_KINDS(X) ATTNPROP_ROUNDED_USER_KINDS(X) ATTNPROP_ENCLOSURE_USER_KINDS(X)
/// Every user kind, in the order help texts list them: exact, rounded, enclosures.
#define ATTNPROP_USER_KINDS(X) ATTNPROP_EXACT_USER_KINDS(X) ATTNPROP_EXP_USER_KINDS(X)
