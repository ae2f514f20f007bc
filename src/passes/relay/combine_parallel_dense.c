/* src/passes/relay/combine_parallel_dense.c — relay::combine_parallel_dense: parallel linear ops of one input become one wide linear and a split.

   Spec: tvm_relay_passes.md, "CombineParallelDense(min_num_branches)",
   "like CombineParallelConv2D": dense layers that read the same input are
   combined when there are at least min_num_branches of them (default 3,
   as TVM). The combiner is combine_parallel_conv2d's (mgopt__cpo_run):
   weights [Cout_i, Cin] concatenated once along axis 0, biases likewise
   (an absent one reads as zeros), the elementwise readers that line up
   combined on the last axis, and a split on the last axis.

   Before:
     main(%x: (2, 2, fp32)) {
       %w1: (1, 2, fp32)* = const(val=[[1, 2]])
       %w2: (2, 2, fp32)* = const(val=[[3, 4], [5, 6]])
       %w3: (1, 2, fp32)* = const(val=[[7, 8]])
       %b2: (2, fp32)* = const(val=[1, -1])
       %a: (2, 1, fp32) = linear(x=%x, weight=%w1)
       %b: (2, 2, fp32) = linear(x=%x, weight=%w2, bias=%b2)
       %c: (2, 1, fp32) = linear(x=%x, weight=%w3)
     } -> (%a, %b, %c)
   After:
     main(%x: (2, 2, fp32)) {
       %a_weight_0: (4, 2, fp32)* = const(val=[[1, 2], [3, 4], [5, 6], [7, 8]])
       %a_bias_0: (4, fp32)* = const(val=[0, 1, -1, 0])
       %a_wide_0: (2, 4, fp32) = linear(x=%x, weight=%a_weight_0, bias=%a_bias_0)
       %a: (2, 1, fp32), %b: (2, 2, fp32), %c: (2, 1, fp32) = split(x=%a_wide_0, split_sizes=[1, 2, 1], axis=1, name="a_split_0")
     } -> (%a, %b, %c)

   Fires on: min_num_branches or more linear ops reading one value as x in
   one block, with constant float weights of one dtype and one Cin, and
   constant or absent biases.
   Must not fire: fewer branches; a run-time weight or bias; weights of
   different Cin or dtype; branches in different blocks.
   Exact: each output feature comes from the same row of weights.
   Cost: as combine_parallel_conv2d. */
#include "../../passes_internal.h"

static mgopt_status mgopt__cpd_run(mgopt_pass_ctx *ctx) { return mgopt__cpo_run(ctx, MGOPT_OP_linear); }

static const mgopt_opt_def mgopt__cpd_opts[] = {
    {"min_num_branches", MGOPT_OPT_INT, "3", "combine only this many parallel linear ops or more", NULL},
};

MGOPT__DEFINE_PASS_WITH_OPTIONS(relay, relay, combine_parallel_dense,
                                "parallel linear ops of one input become one wide linear and a split",
                                mgopt__cpd_opts, mgopt__cpd_run);
