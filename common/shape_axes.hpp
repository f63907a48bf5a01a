// Raw GEMM shapes without a model (nvbench's axes): `N,K[,batch]`, the one syntax and
// parser that `profile --shape`, kernel_bench and the tests share, and the distinct
// shapes of a list of problems (a model's layers often repeat one N x K).
#pragma once

#include <string>
#include <vector>

#include "common/model_catalog.hpp"

namespace shapescope {

// A raw shape is a GemmProblem with no model and no module (tp 1): its files are named by the shape alone.
bool is_raw_shape(const GemmProblem& problem);

// "N,K" or "N,K,batch", each a whole number from 1 up; throws UserError naming `option`, the text and the fix.
GemmProblem parse_shape(const std::string& text, const std::string& option = "--shape");
// Every value of a repeatable option, each distinct shape once, in the order given.
std::vector<GemmProblem> parse_shapes(const std::vector<std::string>& texts, const std::string& option = "--shape");

// "N4096_K7168" or "N512_K128_B16": the shape's part of a profile file name and a bench label.
std::string shape_label(const GemmProblem& problem);

// The first problem of each distinct (N, K, batch), in order.
std::vector<GemmProblem> distinct_shapes(const std::vector<GemmProblem>& problems);

}  // namespace shapescope
