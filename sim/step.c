/* step — see step.h. */
#include "step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/act.h"

/*
 * Sustained fraction of the dense bf16 peak that a training step's GEMMs reach on a GPU of which
 * nothing more is known: hardware FLOPs utilisation of 57-74 % in published runs (Korthikanti et
 * al. HFU 52.8-57.0 % at scale, published.md C.3, which includes exposed communication; MosaicML
 * llm-foundry HFU 59.6-73.7 % on A100 with FSDP, C.7). 0.65 sits inside that range; `tierplan
 * calibrate` replaces it with the GEMM rate measured on the user's GPU.
 */
const double SIM_GEMM_EFFICIENCY = 0.65;

/*
 * The share of a GPU's maximum achievable matmul rate (MAMF, configs/gpus.json gemm_mamf: the
 * best-shape benchmark GEMM) that a training step's tensor-core GEMMs sustain (fp32 ones run at
 * their own best-shape rate: step_gemm_efficiency), once the memory-bound kernels between them run
 * at HBM_ACHIEVABLE and the TP collectives at NVLINK_ACHIEVABLE: calibrated on the 15 A100
 * Megatron runs of traces/published/gpu_throughput.json (Narayanan et al. 2021's table,
 * Korthikanti et al. 2022's Table 5): with each matrix kernel's fixed time counted
 * (STEP_MATMUL_FIXED), their mean absolute error is 3.6-3.8 % from 0.79 to 0.81 and Table 5's
 * alone 3.1-3.2 % at 0.81-0.82; 0.81 is within 0.15 points of the best of both [D: calibration,
 * not a measurement]. A100: 0.81 x 0.869 (stas00/ml-engineering MAMF table: 271.2 of 312 TFLOPS) =
 * 0.70 of peak; H100: 0.81 x 0.803 = 0.65.
 */
#define GEMM_MAMF_SHARE 0.81
/*
 * The share of the datasheet HBM bandwidth memory-bound kernels stream at: a read kernel on an
 * A100-80GB reaches 1.80 of 2.04 TB/s (88 %, Nsight Compute), and NVIDIA's GTC material puts
 * the best of any kernel near 90 % (NVIDIA developer forums, "Trouble to reach peak bandwidth of
 * A100", 2025) [B]. A profile's measured rate is already achieved and is used as it is.
 */
#define HBM_ACHIEVABLE 0.88
/*
 * The share of NVLink's per-direction line rate NCCL's collectives move: "450GB/s is the line
 * rate. With the protocol overhead (~20%) NCCL can get an effective NVLink bandwidth of
 * 370GB/s" (NCCL maintainer, NVIDIA/nccl-tests issue 212, 2024), 370/450 [B].
 */
#define NVLINK_ACHIEVABLE 0.82
/*
 * The share of a NIC's line rate NCCL moves across nodes: "For NDR @ 400Gbps you should see
 * 46-48GB/s per NIC" and "CX-7 NICs at NDR rate (400Gbps) should achieve up to 48-49GB/s per
 * NIC" in an all-to-all (NCCL maintainers, NVIDIA/nccl-tests issues 290 and 267, 2024-2025):
 * 47/50 [B].
 */
#define NET_ACHIEVABLE 0.94

enum { CAT_W, CAT_G, CAT_O, CAT_A, CAT_X }; /* weights, gradients, optimizer, activations, other */

/*
 * cuBLAS workspace per stream: PyTorch's default CUBLAS_WORKSPACE_CONFIG on Hopper is ":4096:8",
 * 8 x 4 MiB = 32 MiB (PyTorch docs, "Reproducibility" / CUDA semantics: cuBLAS workspaces) [B].
 * Two streams (compute and communication) hold one each.
 */
#define CUBLAS_WORKSPACE (2.0 * 32.0 * 1048576.0)
/*
 * Collective step latency (alpha of the alpha-beta model): ~1 us through NVSwitch within a node,
 * ~5 us per hop across nodes over InfiniBand NDR through a spine (interconnect hierarchy quoted
 * in fridayswithfaraday.com "NVIDIA Dynamo network optimization") [C].
 */
#define ALPHA_INTRA 1e-6
#define ALPHA_INTER 5e-6
/*
 * An NCCL collective runs as a kernel whose CTAs hold SMs while it moves data, so the compute
 * it overlaps runs slower: "overlapping computation and communication can result in an average
 * computational slowdown of 18.9 %, with a maximum of 40.0 %" (Characterizing Compute-
 * Communication Overlap in GPU-Accelerated Distributed Deep Learning, arXiv 2507.03114:
 * GPT and LLaMA on 4 A100, H100, MI250 and MI210) [B]: compute 1.189x as long is compute at
 * 1 - 1/1.189 = 15.9 % less of the SMs [D]. An all-gather beside a GEMM on an H100 holds 24
 * of its 132 SMs, 18 % (NVIDIA developer forums, "Compute-communication overlap causes severe
 * GEMM performance degradation", 2025) [C]. A data-parallel collective (what FSDP, ZeRO and
 * Megatron's distributed optimizer overlap with compute) takes that share of its GPU's compute
 * while it runs at its link's rate (eng_task_share). Not the point-to-point
 * traffic of pipeline sends and Megatron-Core's context-parallel ring (NCCL send/recv, a CTA or
 * two per peer), nor collectives that run alone on the compute stream (tensor- and
 * expert-parallel: nothing overlaps them). Transformer Engine's overlapped tensor-parallel
 * collectives take an SM count of their own (te_ub_margin).
 */
#define COLL_SM_SHARE (1.0 - 1.0 / 1.189)
/*
 * The host issues a layer's kernels one at a time and the GPU cannot run ahead of it, so a block
 * takes at least its launches (mdl_job_launches) times the host's cost per launch. Eager PyTorch
 * pays Python, the binding, autograd's recording, the ATen dispatcher and cudaLaunchKernel for
 * each op: "~5-25 us of CPU-side work per op" (jiahuanglin.xyz, "From PyTorch op to kernel
 * launch", per-layer cost table) [C]; forward at 10 us. Backward runs in autograd's C++ engine
 * without Python: the dispatcher and the launch, 3-8 us in the same table [C]: 5 us. A compiled
 * graph calls its kernels from generated code: the launch, 1-3 us [C]: 3 us. Large layers never
 * notice; short sequences, small micro-batches and LoRA's many small kernels do. These are an
 * x86 server's (torch.nn.Linear's forward, one op, takes 13.5 us of host time on a DGX H100's
 * Xeon Platinum 8480C: NVIDIA/TransformerEngine issue 2053 [B]); a host whose cores issue slower
 * (Grace: 2.5-2.75x) scales them by its cpu_launch_scale (hosts.json, host_launch_scale).
 */
#define ISSUE_EAGER_FWD 10e-6
#define ISSUE_EAGER_BWD 5e-6
#define ISSUE_COMPILED 3e-6
/*
 * Context parallelism runs a layer's attention as a ring of cp steps, in Python in forward and
 * in backward (Transformer Engine's AttnFuncWithCPAndKVP2P, transformer_engine/pytorch/
 * attention/dot_product_attention/context_parallel.py at d0067d0, which Megatron-Core calls):
 * each forward step the send and the receive of the next keys and values, the attention kernel
 * over one chunk pair, and the fused corrections of the log-sum-exp and of the output (5 ops);
 * each backward step the sends and receives of the keys and values and of their gradients, the
 * attention's backward kernel, and the adds of the query's, the keys' and the values'
 * gradients (8) [A: source]. One attention kernel becomes cp of them, each with its fill.
 */
#define CP_STEP_FWD_OPS 5.0
#define CP_STEP_BWD_OPS 8.0
/* A host update after backward steps the rank's partition in DeepSpeed's sub-groups (tiles,
 * published.md 9.2 "processed in chunks"); past this many it is simulated in this many equal
 * tiles (a bound on tasks, not a model constant: only the pipeline's fill and drain, one tile
 * each, depend on the count). */
#define UPDATE_TILES_MAX 64
/*
 * Gradients copied to the host leave the GPU through reduce buckets: DeepSpeed's
 * reduce_bucket_size defaults to 5e8 elements (DeepSpeed config docs, "reduce_bucket_size") and
 * ZeRO-1/2 with overlap_comm double-buffers it (the two ipg buffers of
 * deepspeed/runtime/zero/stage_1_and_2.py) [B]. When the copy down is slower than backward the
 * compute waits for a bucket instead of piling gradients up on the GPU.
 */
#define GRAD_BUCKET_ELEMENTS 5e8
#define GRAD_BUCKETS 2
/*
 * DeepSpeed's ZeRO-3 on the GPU (deepspeed/runtime/zero/stage3.py): with contiguous_gradients
 * (default true) it allocates a reduce bucket of reduce_bucket_size elements in the model
 * dtype for the whole run (__ipg_bucket_flat_buffer), and at the step it converts the gradients
 * of one optimizer sub-group of sub_group_size elements (STEP_SUB_GROUP by default) to fp32
 * (_prepare_fp32_grad_for_sub_group) [A: DeepSpeed source and config docs].
 */

double step_sub_group(const struct sim_config *c)
{
	return c->sub_group > 0 ? c->sub_group : STEP_SUB_GROUP;
}

/*
 * DeepSpeed ZeRO-Offload++ Twin-Flow (offload_optimizer.ratio R, ZeRO-3 alone): ZeRO-3 splits a
 * rank's partition into optimizer sub-groups, whole parameters gathered until a group holds
 * sub_group_size elements (stage3.py, _create_fp16_sub_groups), and the first int((1 - R) x n)
 * of its n sub-groups live and step on the GPU, the rest on the CPU (_create_fp32_partitions:
 * subgroup_to_device) [A: DeepSpeed source]. The sub-groups are taken as full but the last;
 * (1 - R) x n is the same double product DeepSpeed's Python forms, truncated alike, so a
 * partition below sub_group_size (one sub-group) stays whole on the CPU for every R above 0.
 */
double step_twin_gpu_share(const struct sim_config *c, double shard)
{
	if (!(c->twin_gpu > 0) || !(shard > 0))
		return 0;
	double sg = step_sub_group(c), n = ceil(shard / sg);
	double gpu = floor(c->twin_gpu * n);
	return gpu >= n ? 1 : gpu * sg / shard;
}

double step_param_partition(const struct mdl_arch *a, uint32_t dp)
{
	return ceil((double)mdl_arch_largest_tensor(a) / (dp ? dp : 1));
}

double step_param_buffer_elements(const struct mdl_arch *a, const struct mdl_job *j, uint32_t dp)
{
	return fmax(STEP_PARAM_BUFFER_BYTES / mdl_job_weight_bytes(j), step_param_partition(a, dp));
}

/* Elements of one gradient reduce bucket: --reduce-bucket, else DeepSpeed's default. */
double step_reduce_bucket(const struct sim_config *c)
{
	return c->reduce_bucket > 0 ? c->reduce_bucket : GRAD_BUCKET_ELEMENTS;
}

uint32_t step_node_gpus(const struct mdl_hw *hw, uint32_t n)
{
	uint32_t gpn = hw->gpus_per_node ? hw->gpus_per_node : 1;
	return n < gpn ? n : gpn;
}

uint32_t step_prefetch(const struct sim_config *c)
{
	return c->prefetch ? c->prefetch : STEP_PREFETCH;
}
/*
 * GPU power while only its copy engines or links are busy: "near idle" (calibration-power-cost
 * 2.5: a GPU waiting on PCIe/NVMe draws about its idle power, 128 W for an H200 with a context,
 * measured); we add 10 % of the idle-to-TDP range for the copy engines and HBM traffic [U]: 185 W
 * on the H200, where its tiering kernel's copy-only phases read about 190 W (a rough reading:
 * nvidia-smi's window averages them with the GEMM phases beside them; traces/calibration).
 */
#define COPY_POWER_FRACTION 0.10

struct stage {
	uint32_t layers, nb;          /* layers of one chunk (all of them without interleaving) */
	bool embed, head;             /* the chunk being built holds the embedding / the head */
	struct mdl_states st;         /* the stage's model state, whole (before TP/ZeRO) */
	struct mdl_states ex;         /* its routed experts' part (expert parallelism splits it) */
	int comp_ring[16];            /* recent compute tasks, for the prefetch limit */
	uint32_t ncomp;
	int h2d_ring[16];
	uint32_t nh2d;
	int d2h_ring[16];             /* recent gradient copies down, for the bucket limit */
	uint32_t nd2h;
	int last_update;              /* last task of the stage's update */
	int last_bwd_comm;            /* last gradient reduction or copy of its last backward */
	int last_ckpt_down;           /* last checkpoint copied off the GPU (to DRAM or flash) */
	int ck_down[16], ck_write[16]; /* checkpoints' copies off the GPU and writes to flash */
	uint32_t nck;
	int opt_step[2], opt_write[2]; /* a pipelined host update's last two steps and writes */
	uint32_t nopt;                /* its updates so far: slot nopt % 2 holds the one two back */
	int hg_ring[16];              /* last backward: what took each block's host gradients */
	uint32_t nhg;
	int rs_ring[16];              /* recent blocks' gradient reduce-scatters (reduce_waits) */
	uint32_t nrs;
	int mb_reduced;               /* the last backward's gradient traffic (next_forward_waits) */
	double graph_pending; /* what backward's graphs hold until the next forward (graph_held) */
};

/* What a layer's recompute mode sets of its costs, per GPU and per layer: the FLOP-equivalents
 * its backward runs again, what it keeps for backward (as held, and as its kernels move it),
 * its working set in backward and in forward, the bytes the recompute rematerialises, the host
 * launches and matrix-kernel fill of its backward, the passes over the weights (dequantisation,
 * DoRA's norm), FP8 casts and eager ops its backward runs (again), the TP all-reduces and CP
 * key/value passes the recompute adds, and whether its working sets come and go with the
 * compute (block_rc). */
struct block_rc {
	double recompute_exec, saved, moved_saved, work, fwd_work, remat;
	double issue_bwd, fixed_bwd, weight_bwd, fp8_again, eager_again, rc_ar, kv_again;
	double moe_again; /* what a recompute copies again (step_moe_dispatch_bytes) */
	bool transient;
	double held; /* of saved, what the graph holds past backward (mdl_act_layer_held) */
};

/*
 * A layer pass's tensor-parallel collectives, in boundary-sized all-reduces (all-gather and
 * reduce-scatter pairs under sequence parallelism): the attention's one and the dense MLP's one
 * (Megatron's two per layer), and the routed experts'. A MoE layer's experts split over the TP
 * group as its linears do (Megatron-Core's expert_tensor_parallel_size defaults to the TP size):
 * the alltoall dispatcher all-gathers the tokens each rank received across the TP group, k copies
 * of its 1/tp of the sequence, and reduce-scatters the experts' output
 * (megatron/core/transformer/moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher,
 * gather_from_sequence_parallel_region and reduce_scatter_to_sequence_parallel_region around the
 * experts; their backward the other way) [A: source]: k boundaries, called outside Transformer
 * Engine's linears, so --tp-comm-overlap's userbuffers hide none of it. A shared expert runs as
 * a dense MLP beside them. Under --expert-tp below tp the gather spans the etp ranks splitting
 * an expert, each holding etp / tp of the boundary's tokens (none at etp 1: the all-to-all
 * brings every rank its experts' tokens whole).
 */
struct tp_passes {
	double dense;  /* attention, and the dense MLP where a layer has one: 1 to 2 */
	double routed; /* the routed experts' gathers and scatters: top-k x the MoE share */
	double dense_mlp; /* of dense, the MLP's: 1 for a dense model, the shared experts' share */
};

struct build {
	struct step_ctx *x;
	struct mdl_states L, E, H; /* one layer, embedding, head: whole */
	struct mdl_flops F;
	double act_saved, act_work, act_embed, act_head, boundary; /* bytes per GPU */
	double act_grad; /* the activation gradients a layer's backward holds at their most */
	double act_head_bwd; /* the loss backward's transient beyond act_head */
	double head_held;    /* of act_head, what the graph holds past backward */
	double head_logits;  /* of act_head, the returned logits a loop keeping them holds */
	double head_live;    /* a quantised head's dequantised copies while its GEMM runs */
	uint32_t ep;         /* expert-parallel ranks (1: none) */
	/* --ep-overlap runs (sim_ep_overlap), and whether the pass being built runs beside
	 * another micro-batch's (step_build): its all-to-alls then go behind its compute */
	bool ep_overlap, ep_hidden;
	/* --shared-expert-overlap runs (sim_shared_overlap), and the FLOP-equivalents of one
	 * layer's shared experts per GPU (before the TP split) in forward and in backward, which
	 * then run beside the layer's all-to-alls (compute) */
	bool shared_overlap;
	double shared_fwd, shared_bwd;
	uint32_t cp;         /* context-parallel ranks (1: none) */
	double kv;           /* bytes of one layer's keys and values for the whole sequence, per
			      * TP rank: what a context-parallel ring passes around */
	/* bytes one GPU sends (and receives) in one expert all-to-all of a layer pass (dispatch
	 * or combine, x the MoE share): to its node's peers over NVLink, to other nodes over its
	 * network link (step_ep_wire) */
	double a2a_in, a2a_out;
	/* a flex dispatcher's SMs as a share of the GPU's, which a pass running beside another's
	 * (--ep-overlap) gives up while its all-to-alls run (compute); 0 otherwise */
	double a2a_sm;
	struct tp_passes tpp; /* a layer pass's TP collectives: dense, and the routed experts' */
	uint32_t etp;         /* expert TP ranks (mdl_layout_etp): tp unless --expert-tp */
	double ekeep;         /* what a GPU keeps of the experts' states, x tp (expert_keep) */
	double act_fwd_work; /* what a layer's forward holds while it runs, beyond what it saves */
	double act_all; /* every activation of a layer, per GPU: what memory-bound kernels move */
	double act_moved_saved; /* of act_all, what the recompute mode keeps (mdl_act_layer_moved) */
	/* HBM bytes a layer moves over its base weights beyond its GEMMs (dequantisation, DoRA's
	 * norm), per GPU */
	struct mdl_weight_passes weights;
	double head_dequant; /* a quantised head's, in its forward and again in its backward */
	/* what a layer's passes over its weights hold at their most (one linear's), in forward
	 * and in backward */
	double weight_live, weight_live_bwd;
	double loss_fwd, loss_bwd; /* the loss's kernels on the head's GPU (mdl_job_loss_traffic) */
	double issue_fwd, issue_bwd; /* host seconds to launch a layer's forward, its backward */
	double fixed_fwd, fixed_bwd; /* GPU seconds of a layer's matrix kernels beyond their FLOPs:
				      * forward, backward with its recompute */
	double eager_fwd, eager_bwd; /* HBM bytes of a layer's eager norms and rotary (act.c) */
	double moe_pass; /* HBM bytes a MoE layer's token dispatcher copies a pass, per GPU */
	double fp8_fwd, fp8_bwd; /* HBM bytes of a layer's FP8 casts in forward / backward, per GPU */
	double fp8_first;        /* and in the forward of a step's first micro-batch alone */
	double fp8_gathered;     /* bytes a layer's weights gather less in FP8 (--fp8-all-gather) */
	/* --recompute-layers (Megatron-Core's block method): the layers of a chunk that run the
	 * job's recompute mode, the first ones; the rest run none, at the costs in `none`
	 * (block_rc). 0: every layer runs the job's mode */
	uint32_t partial;
	struct block_rc rc, none; /* the job's recompute figures, and none's (block_rc) */
	double hbm_bw;
	uint32_t tp, pp, dp, vp;
	uint32_t dp_in, dp_nodes; /* a DP group's ranks per node, and the nodes it spans */
	/* the ranks a ZeRO partition spans (mdl_layout_shard: dp unless hybrid), their ranks per
	 * node and nodes; and, hybrid, the replicas of a shard: ranks per node and nodes */
	uint32_t shard, shard_in, shard_nodes, rep_in, rep_nodes;
	/* the routed experts' data-parallel group (expert_dp), its ranks per node and nodes;
	 * whether their collectives run there (expert_dp_apart), and a layer's local expert
	 * gradient and weight bytes before the division by tp where they do (0 otherwise) */
	uint32_t edp, edp_in, edp_nodes;
	bool ex_apart;
	double ex_grads, ex_weights;
	double tp_bw, pp_bw, net_bw;
	int *f_first, *f_send, *b_first, *b_last, *b_send; /* [cell(k, c, g)] */
	int *b_done; /* [cell]: after a micro-batch's backward and its collectives and copies */
	int setup, done;
	/* a tied head's copy under pipeline parallelism (head_copy): the gradient all-reduce of
	 * the first stage [0] and of the last [1], and what each waited for on its own stage */
	int tie_ar[2], tie_pre[2];
	uint32_t nseg; /* foldable passes built so far (fold_gap) */
	uint32_t edge; /* blocks a folded pass keeps at each end (fold_edge) */
	char *err;
	size_t errlen;
	struct stage sg[]; /* the layout's pp stages, allocated with the build */
};

/* Micro-batch k, chunk c, stage g: the index of its tasks in the build's arrays. */
static size_t cell(const struct build *bd, uint64_t k, uint32_t c, uint32_t g)
{
	return ((size_t)k * bd->vp + c) * bd->pp + g;
}

/* Points stage g at chunk c: its layers and blocks, and the embed / head flags (the embedding
 * sits on chunk 0 of the first stage, the head on the last chunk of the last stage). Resident
 * weights move in at most STEP_BLOCKS blocks; an optimizer stepped in backward frees gradients
 * layer by layer, so it goes layer by layer. */
static void enter_chunk(struct build *bd, uint32_t g, uint32_t c)
{
	const struct step_ctx *x = bd->x;
	struct stage *s = &bd->sg[g];
	s->layers = mdl_layout_chunk_layers(&x->w->arch, &x->c->layout, g, c);
	s->nb = x->pl.fetch == FETCH_RESIDENT && s->layers > STEP_BLOCKS && !x->c->opt_in_bwd
			? STEP_BLOCKS
			: s->layers;
	s->embed = g == 0 && c == 0;
	s->head = g == bd->pp - 1 && c == bd->vp - 1;
}

static int eerr(struct build *b)
{
	snprintf(b->err, b->errlen, "simulator: %s", eng_error(b->x->e));
	return -1;
}

/* -1: an engine error (its message is fetched); -2: the message is already in err */
#define TRY(expr)                                                                                  \
	do {                                                                                       \
		int r_ = (expr);                                                                   \
		if (r_ < 0)                                                                        \
			return r_ == -2 ? -1 : eerr(bd);                                           \
	} while (0)

static int task(struct build *bd, const char *name, int stream, double work, double lat_s,
		int n, const int *res, const float *scale)
{
	int id = eng_task(bd->x->e, name, stream, work, (uint64_t)(lat_s * 1e9 + 0.5), n, res,
			  scale);
	return id < 0 ? eerr(bd) : id;
}

static int dep(struct build *bd, int before, int after)
{
	if (before < 0 || after < 0)
		return 0;
	return eng_dep(bd->x->e, before, after) ? eerr(bd) : 0;
}

/* A transfer of `bytes` between the drives and DRAM staging on `stream`, in the drives' shared
 * budget; -1 with the error set. */
static int flash_io(struct build *bd, const char *name, int stream, double bytes, bool read)
{
	const struct step_machine *mc = &bd->x->mc;
	int path[3] = {read ? mc->nvme_rd : mc->nvme_wr, mc->nvme, mc->dram};
	float sc[3] = {1, read ? 1 : mc->nvme_write_cost, 1};
	return task(bd, name, stream, bytes, bd->x->hw->flash.latency, 3, path, sc);
}

/* Past this a pool's 64-bit byte count could overflow: 2^62 bytes, 4.6 EB. */
#define MEM_LIMIT 4.6e18

static int mem(struct build *bd, int t, int pool, int cat, double bytes, int when)
{
	if (pool < 0 || bytes == 0)
		return 0;
	if (!(fabs(bytes) < MEM_LIMIT)) {
		snprintf(bd->err, bd->errlen, "a memory tier would hold %.3g bytes, beyond what any "
					      "machine has (4.6 EB): reduce --seq or --batch",
			 fabs(bytes));
		return -2;
	}
	/* |bytes| < 2^62 here, so rounding by hand is exact and cheaper than llround */
	int64_t b = (int64_t)(bytes >= 0 ? bytes + 0.5 : bytes - 0.5);
	return eng_effect(bd->x->e, t, pool, cat, b, when) ? eerr(bd), -2 : 0;
}

/* A collective over n > 1 ranks on one link: the faster of ring and tree (NCCL picks per
 * size). all-reduce: ring 2(n-1) steps moving 2(n-1)/n B, tree 2 log2 n steps moving 2 B;
 * all-gather / reduce-scatter: ring (n-1) steps moving (n-1)/n B. Bytes on the wire and the
 * latency, s. */
static void coll_cost(bool allreduce, double bytes, uint32_t n, double bw, double alpha,
		      double *wire, double *lat)
{
	double N = n;
	if (allreduce) {
		double ring_w = 2 * (N - 1) / N * bytes, ring_l = 2 * (N - 1) * alpha;
		/* ceil(log2 n) in integers: the tree's depth (libm's log2 was a profile hotspot) */
		double depth = n > 1 ? 32 - __builtin_clz(n - 1) : 0;
		double tree_w = 2 * bytes, tree_l = 2 * depth * alpha;
		bool ring = ring_l + ring_w / bw <= tree_l + tree_w / bw;
		*wire = ring ? ring_w : tree_w;
		*lat = ring ? ring_l : tree_l;
	} else {
		*wire = (N - 1) / N * bytes;
		*lat = (N - 1) * alpha;
	}
}

/* The link TP collectives use within a node: NVLink at the share NCCL moves of half its
 * bidirectional figure, else the host link (PCIe). */
static double intra_bandwidth(const struct mdl_hw *hw)
{
	return hw->gpu.gpu_link > 0 ? NVLINK_ACHIEVABLE * hw->gpu.gpu_link / 2.0
				    : mdl_host_link_bandwidth(hw);
}

/* Each GPU's share of its node's network; a host without one stays within a node. */
static double net_bandwidth(const struct mdl_hw *hw)
{
	return hw->host.network_per_gpu > 0 ? NET_ACHIEVABLE * hw->host.network_per_gpu
					    : intra_bandwidth(hw);
}

/* Ranks of a group whose members sit `apart` ranks apart that share a node (at least 1). */
static uint32_t ranks_in_node(const struct mdl_hw *hw, uint32_t apart)
{
	uint32_t gpn = hw->gpus_per_node ? hw->gpus_per_node : 1;
	return apart >= gpn ? 1 : gpn / apart;
}

/* Ranks in Megatron's order, tensor fastest, then context, data, pipeline (Megatron-LM's
 * RankGenerator "tp-cp-ep-dp-pp"; DeepSpeed's PipeModelDataParallelTopology likewise): a DP
 * group of dp keeps *dp_in of its ranks in each of *dp_nodes nodes. */
static void dp_ranks(const struct mdl_hw *hw, uint32_t tcp, uint32_t dp, uint32_t *dp_in,
		     uint32_t *dp_nodes)
{
	uint32_t per_node = ranks_in_node(hw, tcp);
	*dp_in = dp < per_node ? dp : per_node;
	*dp_nodes = (dp + *dp_in - 1) / *dp_in;
}

/*
 * The routed experts' data-parallel group: the ranks that hold the same expert slices,
 * tp x cp x dp / (ep x etp) of them, over which Megatron-Core reduces the experts' gradients and
 * its distributed optimizer shards and gathers their state (parallel_state.py: the expert data
 * parallel group of its expert rank generator, "tp-ep-dp-pp" with expert TP fastest, so its
 * members sit etp x ep ranks apart; distributed/distributed_data_parallel.py keeps the expert
 * parameters in buffers of their own reduced over that group) [A: Megatron-LM source]. Where it
 * is one rank (ep x etp = tp x cp x dp) their gradients are reduced nowhere.
 */
static uint32_t expert_dp(const struct mdl_layout *l)
{
	uint32_t d = mdl_layout_ep(l) * mdl_layout_etp(l);
	uint32_t n = l->tp * mdl_layout_cp(l) * l->dp;
	return n % d == 0 && n >= d ? n / d : 1;
}

/* Whether the experts' gradients and gathered weights take that group, apart from the dense
 * ones': under expert parallelism (or an expert TP below tp) with a data-parallel optimizer
 * that keeps whole layers (ZeRO 0 to 2: Megatron-Core's DDP and distributed optimizer), not
 * hybrid sharding, whose replicas reduce as one */
static bool expert_dp_apart(const struct mdl_layout *l)
{
	return mdl_layout_expert_keep(l) != 1 && l->zero < 3 && mdl_layout_shard(l) == l->dp;
}

/* Bytes one expert dispatch (or combine) moves per GPU: each token's hidden state to its k
 * experts, the MoE layers' share of a layer. */
static double a2a_bytes(const struct mdl_arch *a, const struct mdl_job *j, uint32_t tp, bool sp)
{
	double tokens = (double)j->seq * (double)j->micro_batch / (sp ? (double)tp : 1.0);
	return (double)mdl_job_act_bytes(j) * tokens * (double)a->hidden * a->experts_per_tok *
	       (double)a->moe_layers / (double)a->layers;
}

/* The chance that none of a token's k experts, distinct among e, is one of m given ones. */
static double none_of(double e, double m, double k)
{
	double p = 1;
	for (double i = 0; i < k; i++)
		p *= e - m - i > 0 ? (e - m - i) / (e - i) : 0;
	return p;
}

void step_ep_wire(const struct mdl_arch *a, const struct mdl_hw *hw, const struct mdl_layout *l,
		  bool dedup, double *in, double *out)
{
	uint32_t ep = mdl_layout_ep(l), per = ranks_in_node(hw, mdl_layout_etp(l));
	double k = a->experts_per_tok, e = a->experts;
	*in = *out = 0;
	if (ep <= 1 || !a->experts || k <= 0)
		return;
	uint32_t n_in = per < ep ? per : ep;	  /* the group's ranks in a node */
	double nodes = ceil((double)ep / n_in); /* and the nodes it spans */
	if (!dedup) {
		*in = (n_in - 1.0) / ep;
		*out = (ep - (double)n_in) / ep;
		return;
	}
	double gpu = 1 - none_of(e, e / ep, k), node = 1 - none_of(e, e / nodes, k);
	*in = (ep - nodes) * gpu / k;
	*out = (nodes - 1) * node / k;
}

/* Megatron-Core's token dispatcher's copies (step.h). */
double step_moe_dispatch_bytes(const struct mdl_arch *a, const struct mdl_job *j,
			       const struct mdl_layout *l)
{
	uint32_t ep = mdl_layout_ep(l), etp = mdl_layout_etp(l);
	if (ep <= 1 || !a->experts)
		return 0;
	double sent = a2a_bytes(a, j, l->tp, l->sp); /* a rank's routed copies, sent and received */
	double held = sent * (l->sp ? etp : 1);	     /* and gathered over the expert TP ranks */
	double copies = a->experts / ep > 1 ? 2.0 + (j->grouped_experts ? 0.0 : 1.0) : 0.0;
	return 2.0 * sent + copies * 2.0 * held;
}

static struct tp_passes tp_passes(const struct mdl_arch *a)
{
	double moe = a->experts ? (double)a->moe_layers / (double)a->layers : 0.0;
	double mlp = 1.0 - moe + (a->shared_experts ? moe : 0.0);
	return (struct tp_passes){1.0 + mlp, moe * a->experts_per_tok, mlp};
}

/* Appends res to a flow's path with its scale; a resource already there takes the scale on
 * top (a flow lists each resource once). Returns the new path length. */
static int path_add(int *path, float *sc, int n, int res, float scale)
{
	for (int i = 0; i < n; i++)
		if (path[i] == res) { /* one resource once per flow: the scales add */
			sc[i] += scale;
			return n;
		}
	path[n] = res;
	sc[n] = scale;
	return n + 1;
}

/*
 * The resources GPU g's traffic over `link` crosses, appended to path (scaled by sc): the link
 * itself, or, on GPUs with no GPU-to-GPU fabric (LINK_PCIE), the GPU's own PCIe link in both
 * directions, the same resources its host copies use, so peer traffic and weight streaming
 * contend for them (NCCL's P2P and SHM transports both leave and enter a GPU through its PCIe
 * link; a ring step sends as many bytes as it receives). Returns the new path length.
 */
static int on_link(const struct step_machine *mc, uint32_t g, int link, float scale, int *path,
		   float *sc, int n)
{
	if (link != LINK_PCIE)
		return path_add(path, sc, n, link, scale);
	n = path_add(path, sc, n, mc->h2d[g], scale);
	n = path_add(path, sc, n, mc->d2h[g], scale);
	if (mc->pcie_pair[g] >= 0) /* both directions at once, on the measured pair rate */
		n = path_add(path, sc, n, mc->pcie_pair[g], 2 * scale);
	return n;
}

/* Task t, a collective of GPU g, takes COLL_SM_SHARE of g's compute while it runs at the
 * rate its path allows alone (a path already full keeps none). Returns t, or -1. */
static int sm_share(struct build *bd, uint32_t g, int t)
{
	struct eng *e = bd->x->e;
	const struct eng_task *k = t >= 0 ? eng_task_at(e, t) : NULL;
	if (!k || k->work <= 0 || k->nres >= ENG_PATH)
		return t;
	double rate = INFINITY;
	for (int r = 0; r < k->nres; r++)
		rate = fmin(rate, eng_resource_at(e, k->res[r])->capacity / k->scale[r]);
	int sm = bd->x->mc.sm[g];
	double share = COLL_SM_SHARE * eng_resource_at(e, sm)->capacity / rate;
	return eng_task_share(e, t, sm, (float)share) ? eerr(bd) : t;
}

/* count back-to-back collectives of `bytes` each as one task: each pays its own steps'
 * latency (a block's layers issue theirs one by one). */
static int collective(struct build *bd, uint32_t g, const char *name, int stream, int link,
		      bool allreduce, double count, double bytes, uint32_t n, double bw,
		      double alpha)
{
	if (n <= 1 || bytes <= 0 || count <= 0)
		return task(bd, name, stream, 0, 0, 0, NULL, NULL);
	double wire, lat;
	int path[3];
	float sc[3];
	coll_cost(allreduce, bytes, n, bw, alpha, &wire, &lat);
	int np = on_link(&bd->x->mc, g, link, 1, path, sc, 0);
	return task(bd, name, stream, count * wire, count * lat, np, path, sc);
}

/*
 * A collective over GPU g's data-parallel group on its communication stream. Within one node,
 * or with one rank per node, a flat one (collective()). A group of dp_in ranks in each of
 * dp_nodes nodes runs hierarchically, as NCCL does with one channel per NIC: the intra-node
 * part over NVLink and the inter-node part over each GPU's NIC carrying 1/dp_in of the
 * bytes, pipelined, so the slower of the two sets the time (2D all-reduce: Jia et al. 2018,
 * arXiv 1807.11205, sec. 3.3; NCCL's ring and tree over multiple rails).
 */
/* A data-parallel collective of `bytes` per GPU over dp ranks, dp_in in each of dp_nodes nodes:
 * *win bytes over the intra-node link (intra), *wout over each GPU's NIC (net), *lat seconds of
 * steps. Flat within one node or with one rank per node (only one of the two), else
 * hierarchical (dp_coll). */
static void dp_cost(bool allreduce, double bytes, uint32_t dp, uint32_t dp_in, uint32_t dp_nodes,
		    double intra, double net, double *win, double *wout, double *lat)
{
	double lout = 0;
	*win = *wout = 0;
	if (dp_in <= 1 || dp_nodes <= 1) {
		bool out = dp_nodes > 1;
		coll_cost(allreduce, bytes, dp, out ? net : intra, out ? ALPHA_INTER : ALPHA_INTRA,
			  out ? wout : win, lat);
		return;
	}
	coll_cost(allreduce, bytes, dp_in, intra, ALPHA_INTRA, win, lat);
	coll_cost(allreduce, bytes / dp_in, dp_nodes, net, ALPHA_INTER, wout, &lout);
	*lat += lout;
}

/* A collective of `bytes` per GPU over a group of n data-parallel ranks, in of them in each of
 * `nodes` nodes (dp_cost), on GPU g's `stream`. */
static int group_coll(struct build *bd, uint32_t g, int stream, const char *name, bool allreduce,
		      double bytes, uint32_t n, uint32_t in, uint32_t nodes)
{
	struct step_machine *mc = &bd->x->mc;
	if (n <= 1 || bytes <= 0)
		return task(bd, name, stream, 0, 0, 0, NULL, NULL);
	double win, wout, lat;
	dp_cost(allreduce, bytes, n, in, nodes, bd->tp_bw, bd->net_bw, &win, &wout, &lat);
	int path[4];
	float sc[4];
	int np = 0;
	if (win > 0)
		np = on_link(mc, g, mc->tp_link[g], 1, path, sc, np);
	if (wout > 0) /* beside the intra-node part, the NIC carries its share of the bytes */
		np = on_link(mc, g, mc->net_link[g], win > 0 ? (float)(wout / win) : 1, path, sc,
			     np);
	return sm_share(bd, g, task(bd, name, stream, win > 0 ? win : wout, lat, np, path, sc));
}

/* The ranks gradients reduce over and a ZeRO partition spans: the data- and context-parallel
 * ranks together (each context-parallel rank sees tokens of its own; Megatron-Core's data-
 * parallel group "with context parallel", torchtitan's dp_shard_cp mesh). */
static uint32_t dp_group(const struct build *bd)
{
	return bd->dp * bd->cp;
}

/* A collective over GPU g's whole data-parallel group. */
static int dp_coll(struct build *bd, uint32_t g, int stream, const char *name, bool allreduce,
		   double bytes)
{
	return group_coll(bd, g, stream, name, allreduce, bytes, dp_group(bd), bd->dp_in,
			  bd->dp_nodes);
}

/* A ZeRO partition's collective: the weights' all-gather (`reduce` false) over the ranks the
 * partition spans, or the gradients' reduce-scatter there; under hybrid sharding the replicas
 * then all-reduce the shard they hold, on a stream of their own (FSDP2's HSDP: reduce-scatter
 * in the shard group, then all-reduce in the replicate group on all_reduce_stream). Returns the
 * last task; *within, when not NULL, the one in the group (the unsharded gradients are free
 * after it). */
static int shard_coll(struct build *bd, uint32_t g, int stream, const char *name, bool reduce,
		      double bytes, int *within)
{
	int t = group_coll(bd, g, stream, name, false, bytes, bd->shard * bd->cp, bd->shard_in,
			   bd->shard_nodes);
	if (within)
		*within = t;
	if (t < 0 || !reduce || bd->shard >= bd->dp)
		return t;
	int r = group_coll(bd, g, bd->x->mc.s_rep[g], "all-reduce grad shards (replicas)", true,
			   bytes / (bd->shard * bd->cp), bd->dp / bd->shard, bd->rep_in,
			   bd->rep_nodes);
	return r < 0 || dep(bd, t, r) ? -1 : r;
}

/*
 * The data-parallel reduction of gb gradient bytes on a stream: a ZeRO partition's
 * reduce-scatter (zero_rs), else an all-reduce, over the data-parallel group, and where the
 * routed experts' `ge` of them have a group of their own (expert_dp_apart) theirs over it,
 * after. Returns the last task; *within the last in a group (the whole gradients are free
 * after it).
 */
static int grads_reduce(struct build *bd, uint32_t g, int stream, bool zero_rs, double gb,
			double ge, int *within)
{
	int r = zero_rs ? shard_coll(bd, g, stream, "reduce-scatter grads", true, gb - ge, within)
			: (*within = dp_coll(bd, g, stream, "all-reduce grads", true, gb - ge));
	if (r < 0 || ge <= 0)
		return r;
	int e = group_coll(bd, g, stream,
			   zero_rs ? "reduce-scatter expert grads" : "all-reduce expert grads",
			   !zero_rs, ge, bd->edp, bd->edp_in, bd->edp_nodes);
	*within = e;
	return e < 0 || dep(bd, r, e) ? -1 : e;
}

/*
 * The all-gather of w bytes of updated weights (after the step, or layer by layer before the
 * next forward: param_gather), a ZeRO partition's over its ranks, and where the routed experts'
 * `we` of them have a group of their own (expert_dp_apart) theirs over it, after, on a stream.
 * Returns the last task.
 */
static int weights_gather(struct build *bd, uint32_t g, int stream, double w, double we)
{
	int t = shard_coll(bd, g, stream, "all-gather weights", false, w - we, NULL);
	if (t < 0 || we <= 0)
		return t;
	int e = group_coll(bd, g, stream, "all-gather expert weights", false, we, bd->edp,
			   bd->edp_in, bd->edp_nodes);
	return e < 0 || dep(bd, t, e) ? -1 : e;
}

/*
 * count exchanges on GPU g among n ranks: win bytes each to the ranks in its node over NVLink,
 * wout to those in other nodes over its network link. Within the node (wout 0) each of the n - 1
 * peers at NVLink's latency; across nodes the share for other nodes crosses the NIC while the
 * rest crosses NVLink, the slower of the two setting the time (as dp_coll).
 */
static int exchange(struct build *bd, uint32_t g, const char *name, int stream, double count,
		    double win, double wout, uint32_t n)
{
	struct step_machine *mc = &bd->x->mc;
	int path[4];
	float sc[4];
	if (wout <= 0) {
		int np = on_link(mc, g, mc->tp_link[g], 1, path, sc, 0);
		return task(bd, name, stream, count * win, count * (n - 1) * mc->tp_alpha, np, path,
			    sc);
	}
	int np = on_link(mc, g, mc->net_link[g], 1, path, sc, 0);
	if (win > 0) /* peers in the node too */
		np = on_link(mc, g, mc->tp_link[g], (float)(win / wout), path, sc, np);
	return task(bd, name, stream, count * wout, count * (n - 1) * ALPHA_INTER, np, path, sc);
}

/* The context-parallel ring of keys and values: `bytes` among the cp ranks, tp apart in
 * Megatron's rank order, each rank sending (cp - 1)/cp of them to the others; within the node
 * while they fit in it (exchange). */
static int group_exchange(struct build *bd, uint32_t g, const char *name, int stream,
			  double count, double bytes, uint32_t n, uint32_t stride)
{
	uint32_t in = ranks_in_node(bd->x->hw, stride);
	if (n <= in)
		return exchange(bd, g, name, stream, count, (double)(n - 1) / n * bytes, 0, n);
	return exchange(bd, g, name, stream, count, bytes * (in - 1) / n,
			bytes * (double)(n - in) / n, n);
}

/* The experts' dispatch or combine, count of them: the bytes step_ep_wire puts on each link,
 * among the ep ranks (etp apart: the expert-parallel group takes the TP ranks an expert does
 * not span first). */
static int ep_exchange(struct build *bd, uint32_t g, const char *name, int stream, double count)
{
	return exchange(bd, g, name, stream, count, bd->a2a_in, bd->a2a_out, bd->ep);
}

/* Seconds one of GPU g's expert exchanges takes alone on its links (ep_exchange). */
static double ep_seconds(const struct build *bd, uint32_t g)
{
	const struct step_machine *mc = &bd->x->mc;
	const struct eng *e = bd->x->e;
	double in = bd->a2a_in / eng_resource_at(e, mc->tp_link[g])->capacity;
	if (bd->a2a_out <= 0)
		return in + (bd->ep - 1) * mc->tp_alpha;
	return fmax(bd->a2a_out / eng_resource_at(e, mc->net_link[g])->capacity, in) +
	       (bd->ep - 1) * ALPHA_INTER;
}

/*
 * One micro-batch's boundary tensor (s b h) to the next pipeline stage, on GPU g's p2p stream.
 * Each of the tp ranks sends its 1/tp slice: sequence parallelism already holds the tensor
 * split, and without it Megatron's scatter/gather optimisation sends the slices and all-gathers
 * them over NVLink on the receiving side (Narayanan et al. 2021, sec. 4.1), pipelined with the
 * send.
 */
static int p2p_send(struct build *bd, uint32_t g, const char *name)
{
	struct step_machine *mc = &bd->x->mc;
	double slice = bd->boundary / bd->tp;
	int path[ENG_PATH];
	float sc[ENG_PATH];
	int np = on_link(mc, g, mc->pp_link[g], 1, path, sc, 0);
	if (bd->tp == 1 || bd->x->c->layout.sp)
		return task(bd, name, mc->s_p2p[g], slice, mc->pp_alpha, np, path, sc);
	/* the gather moves (tp - 1) slices */
	np = on_link(mc, g, mc->tp_link[g], (float)(bd->tp - 1), path, sc, np);
	return task(bd, name, mc->s_p2p[g], slice, mc->pp_alpha + (bd->tp - 1) * mc->tp_alpha, np,
		    path, sc);
}

/* A copy between the host and GPU g on stream st through `host` (the host side's resource): the
 * PCIe link's direction, that resource, behind a PCIe switch the switch's shared uplink, and the
 * pair of directions when a profile measured them together slower than apart. */
static int host_copy_via(struct build *bd, uint32_t g, bool up, int st, int host,
			 const char *name, double bytes)
{
	const struct step_machine *mc = &bd->x->mc;
	int path[4] = {up ? mc->h2d[g] : mc->d2h[g], host};
	int n = 2;
	if ((up ? mc->sw_h2d : mc->sw_d2h) >= 0)
		path[n++] = up ? mc->sw_h2d : mc->sw_d2h;
	if (mc->pcie_pair[g] >= 0)
		path[n++] = mc->pcie_pair[g];
	return task(bd, name, st, bytes, 0, n, path, NULL);
}

/* A copy between DRAM and GPU g on stream st: through the host's DRAM. */
static int host_copy_on(struct build *bd, uint32_t g, bool up, int st, const char *name,
			double bytes)
{
	return host_copy_via(bd, g, up, st, bd->x->mc.dram, name, bytes);
}

/*
 * A copy between pageable DRAM and GPU g as a synchronous cudaMemcpy makes it: on the GPU's
 * compute stream, after the work queued before it and before the work queued after it, the
 * driver staging it through a pinned buffer (pg_h2d, pg_d2h: step_pageable_rate); the staging's
 * CPU copy, not the DRAM's bandwidth, bounds it, so it takes the DRAM's place on the path.
 */
static int host_copy_sync(struct build *bd, uint32_t g, bool up, const char *name, double bytes)
{
	const struct step_machine *mc = &bd->x->mc;
	return host_copy_via(bd, g, up, mc->s_comp[g], up ? mc->pg_h2d[g] : mc->pg_d2h[g], name,
			     bytes);
}

/* A copy between DRAM and GPU g on the GPU's copy stream for its direction. */
static int host_copy(struct build *bd, uint32_t g, bool up, const char *name, double bytes)
{
	const struct step_machine *mc = &bd->x->mc;
	return host_copy_on(bd, g, up, up ? mc->s_h2d[g] : mc->s_d2h[g], name, bytes);
}

/*
 * The copies that take one block's gradient partition to the host after its backward, on the
 * GPU's copy-down stream, once `a` and `b` are done (the block's compute and its
 * reduce-scatter, -1 none): `down` bytes in the gradients' dtype, `params` parameters. Returns
 * the last copy, -1 on error.
 * COPY_PLAIN: one copy down per micro-batch.
 * DeepSpeed's offload sums a step's micro-batches on the GPU, the sum kept in pinned DRAM
 * ("adding directly to cpu is very slow"), and at the accumulation boundary converts the sum
 * to the master dtype on the GPU before it goes down ("Converting the fp16 tensors to fp32
 * tensors on the CPU with PyTorch is super slow", DeepSpeed issue 899). ZeRO-1/2
 * (stage_1_and_2.py copy_grads_in_partition): with accumulation each micro-batch takes its sum
 * down, each after the first having brought the sum so far up
 * (async_accumulate_grad_in_cpu_via_gpu); at the boundary the sum goes down again in fp32
 * (async_inplace_copy_grad_to_fp32_buffer_from_gpu), which alone is what one micro-batch a step
 * copies. ZeRO-3 (stage3.py partition_grads, the grad_accum_dtype of the model by default): the
 * first micro-batch copies its partition down into the pinned buffer and back up again ("a
 * CUDA buffer to speed up the next few operations"), later ones bring the sum up and take it
 * down; at the boundary the fp32 copy goes down (_offload_grad_partition_at_boundary). All on
 * DeepSpeed's one reduction stream, one after the other [A: DeepSpeed source, 2026-08].
 */
static int grads_to_host(struct build *bd, uint32_t g, uint64_t k, bool last, int a, int b,
			 double down, double params)
{
	const struct step_place *pl = &bd->x->pl;
	int st = bd->x->mc.s_d2h[g];
	bool accum = bd->x->m > 1;
	double master = params * step_host_grad_bytes(pl);
	struct copy_op {
		bool up;
		double bytes;
		const char *name;
	} cp[4];
	int n = 0;
#define COPY(u, by, nm) (cp[n++] = (struct copy_op){u, by, nm})
	switch (pl->grads_copy) {
	case COPY_PLAIN:
		COPY(false, down, "d2h grads");
		break;
	case COPY_DS_ZERO2:
		if (accum && k > 0)
			COPY(true, down, "h2d grad sum");
		if (accum)
			COPY(false, down, "d2h grad sum");
		if (last)
			COPY(false, master, "d2h fp32 grads");
		break;
	case COPY_DS_ZERO3:
		if (k == 0) {
			COPY(false, down, "d2h grads");
			COPY(true, down, "h2d grads back");
		} else {
			COPY(true, down, "h2d grad sum");
			COPY(false, down, "d2h grad sum");
		}
		if (last)
			COPY(false, master, "d2h fp32 grads");
		break;
	}
#undef COPY
	int t = -1;
	for (int i = 0; i < n; i++) {
		t = host_copy_on(bd, g, cp[i].up, st, cp[i].name, cp[i].bytes);
		if (t < 0 || (i == 0 && (dep(bd, a, t) || dep(bd, b, t))))
			return -1;
	}
	return t;
}

/* Bytes of one layer's activations its backward rematerialises: full recompute every one,
 * selective and op what the mode did not keep (selective: the attention core), none nothing.
 * all is the layer's whole inventory, saved what the mode keeps: as its kernels move them
 * (mdl_act_layer_moved) for the recompute's traffic, which writes and reads them again, or as
 * backward holds them (mdl_act_layer_working) for its memory. */
static double rematerialised(enum mdl_recompute rc, double all, double saved)
{
	switch (rc) {
	case MDL_RC_FULL:
		return all;
	case MDL_RC_SELECTIVE:
	case MDL_RC_OP:
		return fmax(0, all - saved);
	case MDL_RC_NONE:
		break;
	}
	return 0;
}

/* Whether the recompute runs a layer's norms and pointwise ops again: full recompute, and the
 * per-op policy, which keeps only matmul and attention outputs (mdl_op_sac_recomputed). */
static bool full_or_op(enum mdl_recompute rc)
{
	return rc == MDL_RC_FULL || rc == MDL_RC_OP;
}

/* ---- machine ---- */

double step_gemm_efficiency(const struct sim_config *c, const struct mdl_hw *hw,
			    enum mdl_precision p)
{
	if (c && c->gemm_efficiency > 0)
		return c->gemm_efficiency;
	/* fp32 GEMMs run on the CUDA cores (PyTorch leaves TF32 off for matmuls since 1.12:
	 * torch.backends.cuda.matmul.allow_tf32 = False, PyTorch docs "TensorFloat-32 (TF32) on
	 * Ampere (and later) devices"), at the GPU's own best-shape rate over the fp32 peak
	 * (gemm_mamf_fp32: 0.51 on an L40S, whose doubled FP32 issue SGEMM does not keep fed, to
	 * 0.98 on an A100), and a step sustains that rate itself, not GEMM_MAMF_SHARE of it: what
	 * the share stands for beside tensor-core GEMMs does not grow with GEMMs 8-16x slower.
	 * The StrongHold artifact's fp32 GPT of 1.7 B parameters on a V100 (strongh2/sc22-ae
	 * results/, 4 x 1,024 tokens, about 1.5e13 FLOPs of GEMMs a forward) ran its forward, the
	 * weights on the GPU, in 1.31 s under Megatron-LM (forward-compute) and 1.19 s under
	 * DeepSpeed ZeRO-2 (forward): 11.6-12.8 TFLOPS, the V100's 13 at its best shape, where
	 * 0.81 of that rate gives 1.54 s and the rate itself 1.27 s [A: measured forward phases].
	 * Without a measurement, the flat share of the peak [U]. A profile's GEMM is a bf16 rate
	 * and does not apply. */
	if (p == MDL_FP32)
		return (hw->gpu.gemm_mamf_fp32 > 0 ? hw->gpu.gemm_mamf_fp32 : SIM_GEMM_EFFICIENCY) *
		       hw->gpu.fp32_flops / hw->gpu.bf16_flops;
	/* a profile's GEMM rate is a benchmark's, as the MAMF is: the step sustains the same
	 * share of it (issue 19: what calibrate does not time stays a stated derating) */
	return hw->prof.gemm_efficiency > 0 ? GEMM_MAMF_SHARE * hw->prof.gemm_efficiency
	       : hw->gpu.gemm_sustained > 0 ? hw->gpu.gemm_sustained
	       : hw->gpu.gemm_mamf > 0	    ? GEMM_MAMF_SHARE * hw->gpu.gemm_mamf
					    : SIM_GEMM_EFFICIENCY;
}

/*
 * A copy from or to pageable host memory: the driver stages it through a pinned buffer, a CPU
 * copy on the host side, so it runs well below the link (CUDA Programming Guide: page-locked
 * memory "can be read or written with much higher bandwidth than pageable memory"). Measured by
 * this project's calibrate (cuda_h2d_pageable, cuda_d2h_pageable: cudaMemcpy from and to
 * malloc'd memory, the median of five sweeps to 1 GiB) on the H200 SXM host of
 * traces/calibration/h200-sxm-2026-12-04.json and its repeat, a 16-core Xeon VM: 6.59 and
 * 9.23 GB/s up, 10.66 and 16.47 GB/s down, where its pinned copies moved 54-55; the mean of the
 * two runs [D: one host; a profile's own pageable rates replace them, and the link's rate caps
 * them].
 */
#define PAGEABLE_H2D 7.91e9
#define PAGEABLE_D2H 13.56e9

double step_pageable_rate(const struct mdl_hw *hw, bool up)
{
	double p = up ? hw->prof.pageable_h2d : hw->prof.pageable_d2h;
	return p > 0 ? p : up ? PAGEABLE_H2D : PAGEABLE_D2H;
}

double step_hbm_rate(const struct mdl_hw *hw)
{
	return hw->prof.hbm_bandwidth > 0 ? hw->prof.hbm_bandwidth
					  : HBM_ACHIEVABLE * hw->gpu.hbm_bandwidth;
}

/*
 * A chain of eager kernels hands its tensors on from one kernel to the next: each reads what the
 * ones before it wrote, and the caching allocator gives the next temporary the block the last one
 * freed. Where the most one of its kernels touches, a binary op's two operands and its result
 * (EAGER_KERNEL_TENSORS x the chain's largest tensor), fits what the GPU's L2 holds of a
 * read-and-write kernel's arrays (cfg_gpu.l2_cache), the chain's tensors do not leave it and each
 * kernel takes the measured l2_kernel_fixed + bytes / l2_bandwidth (te42kyfo/gpu-benches' repeated
 * small kernels, configs/gpus.json; calibrate's cuda_l2_chain on the user's GPU) [B: measured, our
 * fit; the three tensors D: counted from the ops, act.c]: on an L40S the norms' 10 MB fp32 copies
 * of 840 tokens move at 3.9 TB/s where its GDDR6 gives 0.76. The chain's bytes are returned as the
 * bytes that take as long at the HBM rate, which is what the compute block charges them at;
 * unchanged where the chain does not fit, where the GPU's L2 was not measured, or where the L2's
 * rate at that size, fixed time included, is no faster (an HBM GPU's small kernels). The eager
 * multiples (act.c) were measured on tensors far larger than any L2 and stay as they are.
 */
#define EAGER_KERNEL_TENSORS 3.0

bool step_l2(const struct mdl_hw *hw, double *cache, double *rate, double *fixed)
{
	bool prof = hw->prof.l2_bandwidth > 0;
	*cache = prof ? hw->prof.l2_cache : hw->gpu.l2_cache;
	*rate = prof ? hw->prof.l2_bandwidth : hw->gpu.l2_bandwidth;
	*fixed = prof ? hw->prof.l2_kernel_fixed : hw->gpu.l2_kernel_fixed;
	return *rate > 0 && *cache > 0;
}

static double eager_chain(const struct mdl_hw *hw, const struct mdl_eager *c, double *bwd)
{
	double cache, rate, fixed;
	double v = EAGER_KERNEL_TENSORS * c->tensor, k = 1.0, hbm = step_hbm_rate(hw);
	if (step_l2(hw, &cache, &rate, &fixed) && v > 0 && v <= cache) {
		double l2 = v / (fixed + v / rate);
		if (l2 > hbm)
			k = hbm / l2;
	}
	*bwd = c->bwd * k;
	return c->fwd * k;
}

/* A layer's eager traffic (act.c, mdl_act_layer_eager) as HBM bytes: its chains, each where
 * its tensors run (eager_chain). Forward returned, backward in *bwd. */
static double eager_bytes(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			  bool sp, const struct mdl_hw *hw, double *bwd)
{
	struct mdl_eager c[MDL_EAGER_CHAINS];
	double b, f = 0;
	mdl_act_layer_eager(a, j, tp, sp, bwd, c);
	*bwd = 0;
	for (int i = 0; i < MDL_EAGER_CHAINS; i++) {
		f += eager_chain(hw, &c[i], &b);
		*bwd += b;
	}
	return f;
}

/*
 * FlashAttention in Triton (flash_attn_triton.py: Tri Dao's Triton kernel after Phil Tillet's
 * tutorial, with attention bias; llm-foundry copies it for MPT's attn_impl triton) against
 * FlashAttention-2 on an A100 80GB SXM4, head dimension 64 and 128, 512 to 16k tokens:
 * "FlashAttention-2 is around 1.3-1.5x faster than FlashAttention in Triton in the forward pass
 * and around 2x faster in the backward pass" (Dao 2023, arXiv 2307.08691, sec. 4.1) [B: the
 * middle of the forward's range; other GPUs as the A100, C]. FlashAttention-2's rates divided by
 * these.
 */
#define TRITON_FA_FWD_SLOWER 1.4
#define TRITON_FA_BWD_SLOWER 2.0

const char *step_attention_rates(const struct mdl_hw *hw, enum mdl_attention a,
				 enum mdl_precision p, double *fwd, double *bwd)
{
	const struct cfg_gpu *g = &hw->gpu;
	bool cudnn = a == MDL_ATTN_CUDNN && g->cudnn_attention > 0;
	bool triton = a == MDL_ATTN_TRITON;
	*fwd = cudnn ? g->cudnn_attention : g->flash_attention;
	*bwd = cudnn ? g->cudnn_attention_bwd : g->flash_attention_bwd;
	if (!(*bwd > 0))
		*bwd = *fwd;
	if (triton) {
		*fwd /= TRITON_FA_FWD_SLOWER;
		*bwd /= TRITON_FA_BWD_SLOWER;
	}
	/* fp32 inputs: the FlashAttention kernels and cuDNN's take fp16/bf16 only, and PyTorch's
	 * SDPA falls back to its memory-efficient kernel, which also takes fp32
	 * (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp: can_use_mem_efficient_attention
	 * allows kFloat, the flash and cuDNN checks do not): tiled as flash is (no s x s scores
	 * kept), on the CUDA cores, timed as the other fp32 matmuls [U: no fp32 attention rate in
	 * the reference set] */
	if (p == MDL_FP32)
		return NULL;
	return mdl_attn_fused(a) && *fwd > 0 ? (cudnn ? "cuDNN" : triton ? "Triton flash" : "flash")
					     : NULL;
}

double step_fp8_share(const struct mdl_hw *hw)
{
	/* a linear's FP8 GEMM time is its FLOPs over (bf16 efficiency x share x FP8 peak)
	 * (fp8_linear_keep): at the measured rate that is GEMM_MAMF_SHARE of it */
	if (hw->prof.gemm_fp8_efficiency > 0)
		return GEMM_MAMF_SHARE * hw->prof.gemm_fp8_efficiency /
		       step_gemm_efficiency(NULL, hw, MDL_BF16_MIXED);
	return hw->gpu.gemm_mamf_fp8 > 0 && hw->gpu.gemm_mamf > 0
		       ? hw->gpu.gemm_mamf_fp8 / hw->gpu.gemm_mamf
		       : 1.0;
}

/* What a linear layer's FLOP counts as at the GEMM rate: 1, or under FP8 the bf16 peak over the
 * share of the FP8 peak its GEMMs reach (step_layer_flops). */
static double fp8_linear_keep(const struct mdl_job *j, const struct mdl_hw *hw)
{
	return j->precision == MDL_FP8 && hw->gpu.fp8_flops > 0
		       ? hw->gpu.bf16_flops / (step_fp8_share(hw) * hw->gpu.fp8_flops)
		       : 1.0;
}

/*
 * Transformer Engine's overlapped tensor-parallel communication (--tp-comm-overlap: Megatron-
 * Core's userbuffers). The reduce-scatter after each row-parallel forward GEMM (proj_fprop,
 * fc2_fprop: "pipeline") and the collectives beside the column-parallel layers' backward
 * GEMMs (qkv and fc1 dgrad and wgrad: "bulk") run on TE_UB_NUM_SM of the GPU's SMs, and those
 * GEMMs on the rest (set_sm_margin); the all-gathers before the column-parallel forward GEMMs
 * and the row-parallel layers' dgrad ("ring_exchange") go by copy engines and take none
 * (TransformerEngine pytorch/module/base.py, initialize_ub's default_cfg: num_sm 1 for
 * ring_exchange, else 16, set_sm_margin for all but ring_exchange) [A: source]. Megatron-Core
 * and NeMo run those defaults unless a recipe names its own numbers.
 */
#define TE_UB_NUM_SM 16.0

/* The FLOP-equivalents by which --tp-comm-overlap lengthens a layer's passes: the GEMMs it
 * runs on sm_count - TE_UB_NUM_SM SMs, at the rate the step's GEMMs run (FP8's where the linear
 * layers run in FP8). Dense linears only (the experts' GEMMs run under expert parallelism);
 * their weight gradients only where they train. Nothing where the GPU's SM count is unknown. */
/* A mean layer's dense linears (matmul weights every token passes; the routed experts left
 * out), in parameters, by the tensor-parallel GEMM they run in: QKV, proj (o), FC1 (gate, up),
 * FC2 (down), and those no LoRA target names (MoE routers). */
enum { LIN_QKV, LIN_PROJ, LIN_FC1, LIN_FC2, LIN_OTHER, LIN_GROUPS };

static void dense_linears(const struct mdl_arch *a, double p[LIN_GROUPS])
{
	for (int g = 0; g < LIN_GROUPS; g++)
		p[g] = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!t->matmul || t->copies != 1)
			continue;
		int g = !t->target					? LIN_OTHER
			: t->target & (MDL_T_Q | MDL_T_K | MDL_T_V) ? LIN_QKV
			: t->target & MDL_T_O			    ? LIN_PROJ
			: t->target & MDL_T_DOWN		    ? LIN_FC2
								    : LIN_FC1;
		p[g] += (double)t->rows * (double)t->cols * mdl_tensor_share(a, t);
	}
}

static void te_ub_margin(const struct mdl_arch *a, const struct mdl_job *j,
			 const struct mdl_hw *hw, uint32_t tp, bool overlap, struct mdl_flops *f)
{
	double sms = hw->gpu.sm_count, p[LIN_GROUPS];
	if (!overlap || tp <= 1 || !(sms > TE_UB_NUM_SM))
		return;
	dense_linears(a, p);
	/* row-parallel (o, down) and column-parallel weights */
	double row = p[LIN_PROJ] + p[LIN_FC2], col = p[LIN_QKV] + p[LIN_FC1];
	double tokens = (double)j->seq * (double)j->micro_batch;
	double slow = TE_UB_NUM_SM / (sms - TE_UB_NUM_SM) * fp8_linear_keep(j, hw);
	double fwd = 2.0 * tokens * row * slow;
	f->layer_fwd_exec += fwd;
	f->layer_bwd_exec += (j->method == MDL_FULL ? 4.0 : 2.0) * tokens * col * slow;
	if (j->recompute == MDL_RC_FULL)
		f->layer_recompute_exec += fwd;
}

/*
 * --tp-comm-overlap pairs each sequence-parallel collective with one GEMM, not with the layer:
 * Transformer Engine's userbuffers (pytorch/module/base.py, initialize_ub's default methods)
 * all-gather the norm's output inside the QKV and FC1 GEMMs and reduce-scatter the output inside
 * the proj and FC2 GEMMs in forward; in backward they all-gather the output gradient inside the
 * proj and FC2 input-gradient GEMMs, and for QKV and FC1 all-gather the input (for the weight
 * gradient) inside the input-gradient GEMM and reduce-scatter the input gradient inside the
 * weight-gradient GEMM. The attention core and the memory-bound kernels between the GEMMs hide
 * nothing. How much of a collective shows depends on the method (default_cfg) [A: TE source]:
 *   ring_exchange  the all-gathers: the GEMM split into tp chunks, each computed while the next
 *                  chunk arrives from the neighbour (tp - 1 steps), on every SM;
 *   pipeline       the forward reduce-scatters: the GEMM split into num_splits 4, each chunk's
 *                  reduce-scatter beside the next chunk's GEMM, the last one's after them all,
 *                  on sm_count - TE_UB_NUM_SM SMs (set_sm_margin);
 *   bulk           the backward of QKV and FC1: the whole collective beside the whole GEMM, on
 *                  sm_count - TE_UB_NUM_SM SMs.
 * A split GEMM runs as that many matrix kernels, each with its fill (step_matmul_fixed). Under
 * an FP8 recipe the all-gathers move FP8 ("AllGather buffers use fp8": fp8_buf), the
 * reduce-scatters the compute dtype: FP8's faster GEMMs hide less of the reduce-scatters.
 */
#define TE_UB_PIPELINE_SPLITS 4.0 /* default_cfg num_splits for "pipeline" [A: TE source] */

enum ub_method { UB_RING_AG, UB_PIPELINE_RS, UB_BULK };

/* Seconds a GEMM of `flops` per GPU (at `rate` on every SM) and its paired collective of `bytes`
 * over tp ranks take beyond the GEMM alone, as `method` runs them. */
static double ub_gap(enum ub_method method, double bytes, double flops, double rate, uint32_t tp,
		     double bw, double sms, double fixed)
{
	double wire, lat, n = tp, k = TE_UB_PIPELINE_SPLITS;
	coll_cost(false, bytes, tp, bw, ALPHA_INTRA, &wire, &lat);
	double m = wire / bw + lat;
	if (method == UB_RING_AG) /* tp - 1 steps: a chunk's GEMM beside the next chunk's send */
		return (n - 1) * (fmax(0, m / (n - 1) - flops / rate / n) + fixed);
	double g = flops / (rate * (sms - TE_UB_NUM_SM) / sms);
	if (method == UB_PIPELINE_RS) /* first chunk's GEMM, k - 1 overlapped, last chunk's RS */
		return g / k + (k - 1) * fmax(g, m) / k + m / k - g + (k - 1) * fixed;
	return fmax(0, m - g);
}

void step_ub_exposed(const struct mdl_arch *a, const struct mdl_job *j, const struct mdl_hw *hw,
		     double gemm_eff, uint32_t tp, uint32_t cp, bool overlap, double *fwd,
		     double *bwd)
{
	*fwd = *bwd = 0;
	double sms = hw->gpu.sm_count;
	if (!overlap || tp <= 1 || !(sms > TE_UB_NUM_SM))
		return;
	double tokens = (double)j->seq * (double)j->micro_batch / cp, gemm[LIN_GROUPS];
	dense_linears(a, gemm);
	for (int g = 0; g < LIN_GROUPS; g++) /* each GEMM's FLOPs per GPU */
		gemm[g] *= 2.0 * tokens / tp;
	/* the rate te_ub_margin's FLOP-equivalents run at: the job's GEMMs, FP8's where it is */
	double rate = gemm_eff * hw->gpu.bf16_flops / fp8_linear_keep(j, hw);
	double bw = intra_bandwidth(hw), fixed = step_matmul_fixed(hw);
	double rs = (double)mdl_job_act_bytes(j) * tokens * (double)a->hidden;
	double ag = j->precision == MDL_FP8 && hw->gpu.fp8_flops > 0 ? rs / mdl_job_act_bytes(j)
								     : rs;
	double wgrad = j->method == MDL_FULL ? 1 : 0;
	/* the dense MLP's collectives in the layers that have one (a MoE layer's routed experts
	 * gather and scatter outside the userbuffers: tp_passes), its GEMMs there */
	double mlp = tp_passes(a).dense_mlp;
#define GAP(method, bytes, flops) ub_gap(method, bytes, flops, rate, tp, bw, sms, fixed)
#define MLP(method, bytes, flops) (mlp > 0 ? mlp * GAP(method, bytes, (flops) / mlp) : 0)
	*fwd = GAP(UB_RING_AG, ag, gemm[LIN_QKV]) + GAP(UB_PIPELINE_RS, rs, gemm[LIN_PROJ]) +
	       MLP(UB_RING_AG, ag, gemm[LIN_FC1]) + MLP(UB_PIPELINE_RS, rs, gemm[LIN_FC2]);
	*bwd = GAP(UB_RING_AG, ag, gemm[LIN_PROJ]) + MLP(UB_RING_AG, ag, gemm[LIN_FC2]) +
	       GAP(UB_BULK, ag, gemm[LIN_QKV]) + GAP(UB_BULK, rs, wgrad * gemm[LIN_QKV]) +
	       MLP(UB_BULK, ag, gemm[LIN_FC1]) + MLP(UB_BULK, rs, wgrad * gemm[LIN_FC1]);
#undef MLP
#undef GAP
}

void step_layer_flops(const struct mdl_arch *a, const struct mdl_job *j, const struct mdl_hw *hw,
		      double gemm_eff, uint32_t tp, bool tp_overlap, struct mdl_flops *f)
{
	mdl_job_flops(a, j, f);
	bool core_again = mdl_job_core_again(j);
	/* FP8: the linear layers' GEMMs (everything of a layer but its attention core; the lm_head
	 * stays in bf16, as torchao's float8 filter_fqns ["output"] and Transformer Engine recipes
	 * keep it) run at the FP8 peak, at the share of it the GPU's best FP8 GEMM reaches over
	 * what its best bf16 GEMM reaches of the bf16 peak (gemm_mamf_fp8 / gemm_mamf; the same
	 * share where the catalog has no FP8 figure); the casts to FP8 are memory-bound traffic
	 * (mdl_job_fp8_casts, added where the passes' bytes are) */
	if (j->precision == MDL_FP8 && hw->gpu.fp8_flops > 0) {
		/* DoRA's GEMMs are the adapters', in their dtype (mdl_flops.dora_fwd) */
		double keep = fp8_linear_keep(j, hw), c = f->attn_core_fwd_exec;
		double d = f->dora_fwd, db = f->dora_bwd, cb = f->attn_core_bwd_exec;
		double drc = full_or_op(j->recompute) ? d : 0;
		f->layer_fwd_exec = c + d + keep * (f->layer_fwd_exec - c - d);
		f->layer_bwd_exec = cb + db + keep * (f->layer_bwd_exec - cb - db);
		double rc = (core_again ? c : 0) + drc;
		f->layer_recompute_exec = rc + keep * (f->layer_recompute_exec - rc);
		f->attn_half_fwd_exec = c + keep * (f->attn_half_fwd_exec - c);
	}
	/* fp32 adapters outside autocast (--lora-dtype fp32 on a pure bf16 or fp16 model): PEFT
	 * casts x to lora_A's dtype and runs lora_A and lora_B as fp32 linears (peft/tuners/lora/
	 * layer.py, Linear.forward: x.to(lora_A.weight.dtype)) [A: PEFT source], so their GEMMs
	 * (forward, both gradients, a full recompute's forward again) run at the fp32 rate, on the
	 * CUDA cores (step_gemm_efficiency), as do DoRA's (mdl_flops.dora_fwd); under autocast
	 * they run in the compute dtype. A GPU whose catalog entry has no fp32 peak keeps them at
	 * the bf16 rate. */
	if (mdl_job_adapter_bytes(j) > mdl_job_act_bytes(j) && !mdl_job_mixed(j) &&
	    hw->gpu.fp32_flops > 0) {
		double slower = gemm_eff / step_gemm_efficiency(NULL, hw, MDL_FP32) - 1;
		double fwd = slower * f->adapter_fwd, dora = slower * f->dora_fwd;
		f->layer_fwd_exec += fwd + dora;
		f->layer_bwd_exec += 2.0 * fwd + slower * f->dora_bwd;
		if (j->recompute == MDL_RC_FULL)
			f->layer_recompute_exec += fwd;
		if (full_or_op(j->recompute))
			f->layer_recompute_exec += dora;
	}
	te_ub_margin(a, j, hw, tp, tp_overlap, f);
	/* a fused attention kernel runs at its own rate (FlashAttention-2 reaches less of the peak
	 * than cuBLAS on Hopper), its backward (2.5 times the forward's FLOPs) at its own where the
	 * catalog has one: its FLOPs count as the GEMM-rate equivalents */
	double fa_fwd, fa_bwd;
	if (!step_attention_rates(hw, j->attention, j->precision, &fa_fwd, &fa_bwd))
		return;
	double extra = (gemm_eff / fa_fwd - 1) * f->attn_core_fwd_exec;
	f->layer_fwd_exec += extra;
	f->layer_bwd_exec += (gemm_eff / fa_bwd - 1) * f->attn_core_bwd_exec;
	if (core_again)
		f->layer_recompute_exec += extra;
	f->attn_half_fwd_exec += extra;
}

/* "gpu<g> <label>" into an ENG_NAME buffer: the machine is built for every configuration a
 * search simulates, and snprintf showed up in the profile. */
static void gpu_name(char *dst, uint32_t g, const char *label)
{
	char digits[12];
	int n = 0, k = 0;
	do
		digits[n++] = (char)('0' + g % 10);
	while ((g /= 10) && n < 10);
	memcpy(dst, "gpu", 3);
	k = 3;
	while (n)
		dst[k++] = digits[--n];
	if (label) {
		dst[k++] = ' ';
		size_t l = strlen(label);
		if (l > (size_t)(ENG_NAME - 1 - k))
			l = (size_t)(ENG_NAME - 1 - k);
		memcpy(dst + k, label, l);
		k += (int)l;
	}
	dst[k] = '\0';
}

static int machine(struct build *bd)
{
	struct step_ctx *x = bd->x;
	const struct mdl_hw *hw = x->hw;
	struct step_machine *mc = &x->mc;
	struct eng *e = x->e;
	uint32_t n = bd->tp * bd->cp * bd->pp * bd->dp;
	uint32_t gpn = hw->gpus_per_node ? hw->gpus_per_node : 1;
	uint32_t nodes = (n + gpn - 1) / gpn;
	double eff = step_gemm_efficiency(x->c, hw, x->job.precision);
	double h2d = mdl_host_link_dir(hw, true), d2h = mdl_host_link_dir(hw, false);
	double bidir = mdl_host_link_bidir(hw);
	double hbm = step_hbm_rate(hw);
	double intra = intra_bandwidth(hw), net = net_bandwidth(hw);
	char name[ENG_NAME];

	/* the DP group's ranks per node (dp_ranks); consecutive pipeline stages sit tp x cp x dp
	 * ranks apart, in other nodes once the layout spans more than one */
	bool pp_inter = n > gpn;
	dp_ranks(hw, bd->tp, dp_group(bd), &bd->dp_in, &bd->dp_nodes);
	bd->edp = expert_dp(&x->c->layout);
	dp_ranks(hw, bd->etp * bd->ep, bd->edp, &bd->edp_in, &bd->edp_nodes);
	/* a shard group is consecutive data-parallel ranks (the inner dimension of FSDP's
	 * (replicate, shard) mesh), its replicas shard apart */
	uint32_t sc = bd->shard * bd->cp;
	bd->shard_in = sc < bd->dp_in ? sc : bd->dp_in;
	bd->shard_nodes = (sc + bd->shard_in - 1) / bd->shard_in;
	bd->rep_in = sc < bd->dp_in ? bd->dp_in / sc : 1;
	bd->rep_nodes = (bd->dp / bd->shard + bd->rep_in - 1) / bd->rep_in;
	mc->k = step_node_gpus(hw, n);
	bd->tp_bw = intra;
	bd->net_bw = net;
	bd->pp_bw = pp_inter ? net : intra;
	mc->tp_alpha = ALPHA_INTRA;
	mc->pp_alpha = pp_inter ? ALPHA_INTER : ALPHA_INTRA;

	/* the node's base draw (its share when the layout uses part of one); the DRAM's draw is
	 * added by sim_run for the size the option buys */
	double share = n < gpn ? (double)n / gpn : 1;
	int node = eng_node(e, "node", hw->host.base_power * share, nodes);
	TRY(node);
	/* each stage's device stands for its GPUs in one node: k per node over pp stages (with
	 * more stages than GPUs per node, a fraction: the node's draw averages its stages) */
	double gpu_copies = (double)mc->k / bd->pp;
	double copy_w = hw->gpu.idle_power + COPY_POWER_FRACTION * (hw->gpu.tdp - hw->gpu.idle_power);

	for (uint32_t g = 0; g < bd->pp; g++) {
#define RES(field, label, cap, unit)                                                               \
	do {                                                                                       \
		gpu_name(name, g, label);                                 \
		TRY(mc->field[g] = eng_resource(e, name, cap, unit));                              \
	} while (0)
		/* GEMMs at the sustained rate; the memory-bound kernels between them count here as
		 * FLOP-equivalents (see compute()) */
		RES(sm, "compute", eff * hw->gpu.bf16_flops, "FLOP-eq");
		RES(hbm, "hbm", hbm, "B");
		RES(h2d, "pcie h2d", h2d, "B");
		RES(d2h, "pcie d2h", d2h, "B");
		mc->pg_h2d[g] = mc->pg_d2h[g] = -1;
		if (bd->x->pl.ckpt_sync) {
			RES(pg_h2d, "pageable h2d", fmin(h2d, step_pageable_rate(hw, true)), "B");
			RES(pg_d2h, "pageable d2h", fmin(d2h, step_pageable_rate(hw, false)), "B");
		}
		/* both directions at once move less than their sum (mdl_host_link_bidir): the
		 * pair shares that rate */
		mc->pcie_pair[g] = -1;
		if (bidir > 0 && bidir < h2d + d2h)
			RES(pcie_pair, "pcie both directions", bidir, "B");
		int nvl = LINK_PCIE;
		if (hw->gpu.gpu_link > 0) {
			gpu_name(name, g, "nvlink");
			TRY(nvl = eng_resource(e, name, intra, "B"));
		}
		int nt = nvl;
		if (net != intra && nodes > 1) {
			gpu_name(name, g, "network");
			TRY(nt = eng_resource(e, name, net, "B"));
		}
		mc->tp_link[g] = nvl;
		mc->net_link[g] = nt;
		mc->pp_link[g] = pp_inter ? nt : nvl;
#define STREAM(field, label)                                                                       \
	do {                                                                                       \
		gpu_name(name, g, label);                                 \
		TRY(mc->field[g] = eng_stream(e, name));                                           \
	} while (0)
		STREAM(s_comp, "compute");
		STREAM(s_comm, "collectives");
		/* the weights' all-gathers on a stream of their own, beside the gradients'
		 * reductions: FSDP's unshard stream and post-backward stream (FSDP2: all-gather and
		 * reduce-scatter streams, _fsdp_param_group.py FSDPCommContext), DeepSpeed ZeRO-3's
		 * all-gather stream and its reduction stream under overlap_comm */
		if (x->pl.fetch != FETCH_RESIDENT)
			STREAM(s_gather, "weight all-gathers");
		/* pipeline sends on a stream of their own, as Megatron's batched isend/irecv: they
		 * never queue behind a gradient reduction */
		STREAM(s_p2p, "p2p");
		if (x->c->tp_comm_overlap)
			STREAM(s_tp, "tp collectives");
		if (mdl_layout_cp(&x->c->layout) > 1)
			STREAM(s_cp, "cp ring");
		if (bd->ep_overlap || bd->shared_overlap)
			STREAM(s_ep, "ep all-to-alls");
		/* FSDP2 runs HSDP's all-reduces on a stream of their own, beside the all-gathers and
		 * reduce-scatters ("collectives use different network resources and can overlap",
		 * _fsdp_param_group.py, FSDPCommContext.lazy_init) */
		if (bd->shard < bd->dp)
			STREAM(s_rep, "replica all-reduces");
		STREAM(s_h2d, "copy h2d");
		STREAM(s_d2h, "copy d2h");
		gpu_name(name, g, "hbm");
		TRY(mc->gpu_pool[g] = eng_pool(e, name, hw->gpu.memory, 1));
		gpu_name(name, g, NULL);
		int dev = eng_device(e, node, name, hw->gpu.idle_power, gpu_copies);
		TRY(dev);
		TRY(eng_device_state(e, dev, mc->sm[g], hw->gpu.tdp));
		TRY(eng_device_state(e, dev, mc->hbm[g], hw->gpu.tdp));
		TRY(eng_device_state(e, dev, mc->h2d[g], copy_w));
		TRY(eng_device_state(e, dev, mc->d2h[g], copy_w));
	}
	double k = mc->k;
	/* GPUs behind one PCIe switch share its uplink to the CPU (max-min among the sw GPUs) */
	mc->sw_h2d = mc->sw_d2h = -1;
	if (hw->host.switch_uplink > 0 && hw->host.gpus_per_switch > 1) {
		double sw = fmin(k, hw->host.gpus_per_switch);
		TRY(mc->sw_h2d = eng_resource(e, "pcie switch uplink h2d", hw->host.switch_uplink / sw,
					      "B"));
		TRY(mc->sw_d2h = eng_resource(e, "pcie switch uplink d2h", hw->host.switch_uplink / sw,
					      "B"));
	}
	TRY(mc->dram = eng_resource(e, "host dram", hw->host.dram_bandwidth / k, "B"));
	TRY(mc->cpu = eng_resource(e, "host cpu adam",
				   hw->host.cpu_cores * hw->host.cpu_adam_rate_per_core / k, "param"));
	TRY(mc->s_cpu = eng_stream(e, "host cpu optimizer"));
	TRY(mc->s_opt_rd = eng_stream(e, "host optimizer reads"));
	TRY(mc->s_opt_wr = eng_stream(e, "host optimizer writes"));
	TRY(mc->s_nvme = eng_stream(e, "host nvme weights"));
	TRY(mc->s_ckpt = eng_stream(e, "host nvme checkpoints"));
	TRY(mc->dram_pool = eng_pool(e, "host dram", hw->dram, k));
	/* the CPUs idle as the node's base does, its share of them; at work on this job's
	 * optimizer they draw all their rise above idle (the job has every core: mc->cpu) */
	double cpu_idle = hw->host.cpu_idle_power * share;
	int cpu = eng_device(e, node, "cpu", cpu_idle, 1);
	TRY(cpu);
	TRY(eng_device_state(e, cpu, mc->cpu,
			     cpu_idle + hw->host.cpu_power - hw->host.cpu_idle_power));
	mc->nvme_rd = mc->nvme_wr = mc->nvme = mc->flash_pool = -1;
	if (hw->flash_count > 0) {
		double rd = mdl_flash_bandwidth(hw, true), wr = mdl_flash_bandwidth(hw, false);
		TRY(mc->nvme_rd = eng_resource(e, "flash read", rd / k, "B"));
		TRY(mc->nvme_wr = eng_resource(e, "flash write", wr / k, "B"));
		/* One budget for both directions: the controller and the NAND dies serve reads and
		 * writes in turn, so reading at r and writing at w together need r/R + w/W <= 1 (the
		 * SSD term of the Fuyou/Ratel overlap model, published.md 9.4) [D]; PCIe itself is
		 * full duplex and is not what limits a drive. */
		TRY(mc->nvme = eng_resource(e, "flash drives", rd / k, "B read"));
		mc->nvme_write_cost = (float)(rd / wr);
		TRY(mc->flash_pool = eng_pool(e, "flash", hw->flash_count * hw->flash.capacity, k));
	}
	/* the drives draw power where the placement uses them, as an option buys them (a GPU-only
	 * or DRAM-only option on a host with drives configured for the tiers buys none) */
	if (hw->flash_count > 0 && step_uses_flash(&x->pl)) {
		int ssd = eng_device(e, node, "flash", hw->flash_count * hw->flash.idle_power, 1);
		TRY(ssd);
		TRY(eng_device_state(e, ssd, mc->nvme_wr, hw->flash_count * hw->flash.active_power));
		TRY(eng_device_state(e, ssd, mc->nvme_rd, hw->flash_count * hw->flash.active_power));
	}
	return 0;
}

/* HBM bytes of one layer's FP8 casts per GPU (mdl_job_fp8_casts; 0 unless fp8) in its forward
 * and its backward, for `tokens` tokens split over tp ranks, and in the forward of a step's
 * first micro-batch alone (*first; NULL where not wanted). `gathered`: the weights are cast
 * shard by shard, 1/dp of them on each rank, before an FP8 all-gather, and backward takes the
 * gathered FP8 weights as they are (torchao: tensor_already_casted_to_fp8). `whole`: the
 * weights stay whole on the GPU and Megatron-Core passes Transformer Engine
 * is_first_microbatch, so TE casts them (and their transposes) on the first micro-batch of a
 * step and reuses the FP8 copies on the rest and in a recompute
 * (megatron/core/transformer/module.py set_is_first_microbatch: "TE modules will update their
 * fp8 parameter cache"; extensions/transformer_engine.py) [A: source]; weights a ZeRO-3 gather
 * or a host tier brings anew are cast anew. */
static void fp8_layer_casts(const struct mdl_arch *a, const struct mdl_job *j, double tokens,
			    uint32_t tp, double ekeep, bool gathered, uint32_t dp, bool whole,
			    double *fwd, double *bwd, double *first)
{
	struct mdl_fp8_casts fc;
	mdl_job_fp8_casts(a, j, &fc);
	bool once = whole && j->fp8_recipe == MDL_FP8_TE;
	/* a GPU holds ekeep x tp of the routed experts (mdl_layout_expert_keep) */
	double held = fc.weights > 0 ? 1.0 - (1.0 - ekeep) * fc.experts / fc.weights : 1.0;
	double weights = (gathered ? 1.0 / dp : 1.0) * held * fc.weights / tp;
	*fwd = tokens * fc.fwd_per_token / tp + (once ? 0 : weights);
	*bwd = (tokens * fc.bwd_per_token + (gathered ? 0 : held * fc.weights_bwd)) / tp;
	if (first)
		*first = once ? weights : 0;
}

/* torchao's Float8Linear with enable_fsdp_float8_all_gather casts each rank's shard to float8
 * before FSDP's all-gather and computes with what it gathers: one byte a parameter for the
 * compute dtype's two [A: torchao float8 README]. */
double step_fp8_gathered_less(const struct mdl_arch *a, const struct mdl_job *j, bool on)
{
	double p[LIN_GROUPS], lin = 0;
	if (!on || j->precision != MDL_FP8)
		return 0;
	dense_linears(a, p);
	for (int g = 0; g < LIN_GROUPS; g++)
		lin += p[g];
	return lin * (mdl_job_act_bytes(j) - 1.0);
}

/* The host's time to issue an op over the ISSUE_* figures' x86 server's: its catalog's
 * cpu_launch_scale, 1 where unset. */
static double host_launch_scale(const struct mdl_hw *hw)
{
	return hw->host.cpu_launch_scale > 0 ? hw->host.cpu_launch_scale : 1.0;
}

/* Host seconds to launch one decoder layer's forward kernels and its backward's (with the
 * forward a recompute runs again), and the GPU seconds its matrix kernels cost beyond their
 * FLOPs in each, on a rank holding 1/ep of the experts, the attention a ring of cp steps
 * (CP_STEP_FWD_OPS). */
static void layer_issue(const struct mdl_arch *a, const struct mdl_job *j,
			const struct mdl_hw *hw, uint32_t ep, uint32_t cp, double *fwd, double *bwd,
			double *fixed_fwd, double *fixed_bwd)
{
	struct mdl_launches kl;
	mdl_job_launches(a, j, ep, &kl);
	double k = host_launch_scale(hw);
	*fwd = k * kl.fwd * (j->compile ? ISSUE_COMPILED : ISSUE_EAGER_FWD);
	/* checkpointing re-runs the Python forward inside backward */
	*bwd = k * (j->compile ? (kl.bwd + kl.recompute) * ISSUE_COMPILED
			       : kl.bwd * ISSUE_EAGER_BWD + kl.recompute * ISSUE_EAGER_FWD);
	*fixed_fwd = kl.mm_fwd * step_matmul_fixed(hw);
	*fixed_bwd = (kl.mm_bwd + kl.mm_recompute) * step_matmul_fixed(hw);
	if (cp > 1) { /* the ring's ops beyond the one attention kernel counted, Python both ways */
		double again = mdl_job_core_again(j);
		double rf = CP_STEP_FWD_OPS * cp - 1, rb = CP_STEP_BWD_OPS * cp - 1;
		*fwd += k * rf * ISSUE_EAGER_FWD;
		*bwd += k * (rb + again * rf) * ISSUE_EAGER_FWD;
		*fixed_fwd += (cp - 1) * step_matmul_fixed(hw);
		*fixed_bwd += (1 + again) * (cp - 1) * step_matmul_fixed(hw);
	}
}

double step_matmul_fixed(const struct mdl_hw *hw)
{
	return hw->prof.matmul_fixed > 0 ? hw->prof.matmul_fixed : STEP_MATMUL_FIXED;
}

/* One layer's share of a stage's floor under j's recompute mode: its FLOP-equivalents per TP
 * rank, memory-bound bytes, TP all-reduces (as many expert all-to-alls), host launches and
 * matrix-kernel fill, forward and backward. */
struct floor_terms {
	double flops, bytes, ars, issue_fwd, issue_bwd, fixed_fwd, fixed_bwd;
};

/* The TP collectives a layer's recompute runs again, in all-reduces: a full recompute the
 * forward's two; one that stops early (mdl_job_early_stop) not the one after the down
 * projection, an all-reduce, or under sequence parallelism a reduce-scatter, half of one; the
 * mlp module of selective recompute its dense layers' MLP's one (its checkpoint runs the
 * submodule whole, the gather before it and the reduction after). The builder runs as many
 * expert all-to-alls as TP collectives, so in a model with both dense and MoE layers that
 * share is counted on the MoE layers' all-to-alls too (DeepSeek-V3: 3 of 61 layers). */
static double rc_collectives(const struct mdl_arch *a, const struct mdl_job *j, bool sp)
{
	double stops;
	if (mdl_job_rc_modules(j) & MDL_RM_MLP)
		return a->experts ? 1.0 - (double)a->moe_layers / (double)a->layers : 1.0;
	if (j->recompute != MDL_RC_FULL)
		return 0;
	mdl_job_early_stop(a, j, &stops);
	return 2.0 - stops * (sp ? 0.5 : 1.0);
}

static void floor_terms(const struct mdl_arch *a, const struct mdl_job *j,
			const struct mdl_layout *l, const struct mdl_hw *hw, double gemm_eff,
			bool tp_overlap, struct floor_terms *t)
{
	struct mdl_flops f;

	step_layer_flops(a, j, hw, gemm_eff, l->tp, tp_overlap, &f);
	double saved, all = mdl_act_layer_moved(a, j, l->tp, l->sp, &saved);
	/* the same passes as forward() and backward(): GEMMs, the memory-bound traffic, the TP
	 * all-reduces, all serial on the compute stream */
	t->flops = (f.layer_fwd_exec + f.layer_bwd_exec + f.layer_recompute_exec) / l->tp;
	double rc_mem = 2.0 * rematerialised(j->recompute, all, saved);
	double cast_fwd, cast_bwd, again = j->recompute == MDL_RC_FULL;
	/* under ZeRO-3 the weights may be cast shard by shard (--fp8-all-gather): a floor takes
	 * that share whether or not the job does; below it they stay whole and TE casts them once
	 * a step, which a floor per micro-batch leaves out */
	fp8_layer_casts(a, j, (double)j->seq * (double)j->micro_batch, l->tp,
			mdl_layout_expert_keep(l), l->zero == 3 && l->dp > 1, l->dp, l->zero < 3,
			&cast_fwd, &cast_bwd, NULL);
	double eager_bwd, eager_fwd = eager_bytes(a, j, l->tp, l->sp, hw, &eager_bwd);
	struct mdl_weight_passes dq;
	mdl_job_weight_passes(a, j, &dq);
	t->bytes = 6.0 * all + rc_mem + (dq.fwd + dq.bwd) / l->tp + cast_fwd * (1 + again) +
		   cast_bwd + eager_fwd * (full_or_op(j->recompute) ? 2.0 : 1.0) + eager_bwd +
		   step_moe_dispatch_bytes(a, j, l) * (full_or_op(j->recompute) ? 3.0 : 2.0);
	t->ars = 4.0 + rc_collectives(a, j, l->sp);
	layer_issue(a, j, hw, mdl_layout_ep(l), mdl_layout_cp(l), &t->issue_fwd, &t->issue_bwd,
		    &t->fixed_fwd, &t->fixed_bwd);
	double ub_fwd, ub_bwd; /* what the TP collectives overlapped per GEMM leave exposed */
	step_ub_exposed(a, j, hw, gemm_eff, l->tp, mdl_layout_cp(l), tp_overlap, &ub_fwd, &ub_bwd);
	t->fixed_fwd += ub_fwd;
	t->fixed_bwd += ub_bwd + (j->recompute == MDL_RC_FULL ? ub_fwd : 0);
}

double step_stage_floor(const struct mdl_arch *a, const struct mdl_job *j,
			const struct mdl_layout *l, const struct mdl_hw *hw, double gemm_eff,
			double nl, double rc_share, double extra, bool tp_overlap, bool ep_overlap,
			bool ep_dedup)
{
	double wire = 0, lat = 0, cp = mdl_layout_cp(l);
	double hbm = step_hbm_rate(hw);
	struct floor_terms t;

	floor_terms(a, j, l, hw, gemm_eff, tp_overlap, &t);
	if (rc_share < 1) {
		/* --recompute-layers: the other layers recompute nothing; every term is a sum
		 * over the layers, so the mean per layer is the blend */
		struct floor_terms n;
		struct mdl_job none = *j;
		none.recompute = MDL_RC_NONE;
		floor_terms(a, &none, l, hw, gemm_eff, tp_overlap, &n);
#define MIX(f) (t.f = rc_share * t.f + (1 - rc_share) * n.f)
		MIX(flops), MIX(bytes), MIX(ars), MIX(issue_fwd), MIX(issue_bwd), MIX(fixed_fwd);
		MIX(fixed_bwd);
#undef MIX
	}
	double comm = 0, tp_comm = 0;
	double boundary = (double)mdl_job_act_bytes(j) * (double)j->seq * (double)j->micro_batch *
			  (double)a->hidden;
	if (l->tp > 1) {
		coll_cost(true, boundary, l->tp, intra_bandwidth(hw), ALPHA_INTRA, &wire, &lat);
		tp_comm = t.ars / 2 * tp_passes(a).dense * (lat + wire / intra_bandwidth(hw));
	}
	/* the routed experts' gathers and scatters show under --tp-comm-overlap too */
	uint32_t etp = mdl_layout_etp(l);
	if (etp > 1 && a->experts) {
		coll_cost(true, boundary * etp / l->tp, etp, intra_bandwidth(hw), ALPHA_INTRA,
			  &wire, &lat);
		comm += t.ars / 2 * tp_passes(a).routed * (lat + wire / intra_bandwidth(hw));
	}
	/* expert parallelism: the dispatch and combine all-to-alls, as many as the TP all-reduces
	 * and on the same stream (compute(); --ep-overlap: on their own, below), as ep_exchange's
	 * tasks: the bytes step_ep_wire puts on the GPU's network link and on its NVLink, at the
	 * slower of the two, each exchange with its latency; a context-parallel rank dispatches
	 * 1/cp of the tokens (the / cp below) */
	uint32_t ep = mdl_layout_ep(l);
	double a2a = ep > 1 && a->experts ? a2a_bytes(a, j, l->tp, l->sp) : 0, a2a_t = 0;
	double in, out;
	step_ep_wire(a, hw, l, ep_dedup, &in, &out);
	if (a2a > 0 && out <= 0)
		a2a_t = t.ars * ((ep - 1) * ALPHA_INTRA + a2a * in / intra_bandwidth(hw));
	else if (a2a > 0)
		a2a_t = t.ars *
			(fmax(a2a * out / net_bandwidth(hw), a2a * in / intra_bandwidth(hw)) +
			 (ep - 1) * ALPHA_INTER);
	/* a GPU computes its 1/cp of the tokens, but launches every kernel; the compute blocks
	 * last at least the host's launches (compute()) */
	double gpu = nl * ((t.flops / (gemm_eff * hw->gpu.bf16_flops) + t.bytes / hbm) / cp +
			   t.fixed_fwd + t.fixed_bwd) +
		     extra;
	double busy = fmax(gpu, nl * (t.issue_fwd + t.issue_bwd));
	double stream = (tp_overlap ? fmax(busy, nl * tp_comm / cp) : busy + nl * tp_comm / cp) +
			nl * comm / cp;
	/* --ep-overlap: the all-to-alls on a stream of their own, beside the rest */
	return ep_overlap ? fmax(stream, nl * a2a_t / cp) : stream + nl * a2a_t / cp;
}

/* One uncontended data-parallel collective of `bytes` per GPU, as group_coll runs it. */
static double dp_coll_seconds(bool allreduce, double bytes, uint32_t dp, uint32_t dp_in,
			      uint32_t dp_nodes, double intra, double net)
{
	if (dp <= 1 || bytes <= 0)
		return 0;
	double win, wout, lat;
	dp_cost(allreduce, bytes, dp, dp_in, dp_nodes, intra, net, &win, &wout, &lat);
	return fmax(win / intra, wout / net) + lat;
}

/* The dense bytes' collective over the data-parallel group and, where the routed experts' `e`
 * of the bytes have their own (expert_dp_apart), theirs over it after, as grads_reduce and
 * update run them. */
static double dp_colls_seconds(bool allreduce, double bytes, double e, const struct mdl_layout *l,
			       const struct mdl_hw *hw, uint32_t dp_in, uint32_t dp_nodes)
{
	double intra = intra_bandwidth(hw), net = net_bandwidth(hw);
	uint32_t edp = expert_dp(l), ein, enodes;
	dp_ranks(hw, mdl_layout_etp(l) * mdl_layout_ep(l), edp, &ein, &enodes);
	return dp_coll_seconds(allreduce, bytes - e, l->dp, dp_in, dp_nodes, intra, net) +
	       dp_coll_seconds(allreduce, e, edp, ein, enodes, intra, net);
}

double step_dp_floor(const struct mdl_arch *a, const struct mdl_job *j,
		     const struct mdl_layout *l, const struct mdl_hw *hw, uint64_t m)
{
	uint32_t dp = l->dp, tp = l->tp;
	if (dp <= 1 || mdl_layout_cp(l) > 1)
		return 0;
	uint32_t dp_in, dp_nodes;
	dp_ranks(hw, tp, dp, &dp_in, &dp_nodes);
	double intra = intra_bandwidth(hw), net = net_bandwidth(hw);
	/* a stage's decoder layers only (its embedding or head would add), of which a GPU keeps
	 * experts / ep under expert parallelism, their collectives over their own group where
	 * they have one */
	struct mdl_states whole, ex, st;
	double keep = mdl_layout_expert_keep(l);
	mdl_job_states_part(a, j, a->layers / l->pp, false, false, &whole);
	mdl_job_expert_states(a, j, a->layers / l->pp, &ex);
	mdl_ep_local(&whole, &ex, keep, &st);
	double w = st.weights_bytes / tp, g = st.gradients_bytes / tp;
	bool apart = expert_dp_apart(l);
	double we = apart ? ex.weights_bytes * keep / tp : 0;
	double ge = apart ? ex.gradients_bytes * keep / tp : 0;
	double ar = dp_colls_seconds(true, g, ge, l, hw, dp_in, dp_nodes);
	double rs = dp_colls_seconds(false, g, ge, l, hw, dp_in, dp_nodes);
	double ag = dp_colls_seconds(false, w, we, l, hw, dp_in, dp_nodes);
	switch (l->zero) {
	case 0:
		return ar;
	case 1: /* the distributed optimizer reduce-scatters (grads_reduce), then gathers */
		return rs + ag;
	case 2:
		return (double)m * rs + ag;
	default: /* every micro-batch gathers the weights (at least once) and reduce-scatters, on
		  * two streams sharing the links: their bytes add on each, one latency at least */
		return (double)m * dp_coll_seconds(false, w + g, dp, dp_in, dp_nodes, intra, net);
	}
}

/* ---- the step ---- */

static int ring_back(const int *ring, uint32_t n, uint32_t d)
{
	return n >= d ? ring[(n - d) % 16] : -1;
}

/*
 * A tied head under pipeline parallelism. Where the embedding and the head are on different
 * stages, Megatron-Core's language model creates "a second copy of word_embeddings on the last
 * stage" and, before each update, runs "an all-reduce between the grads of the two
 * word_embeddings layers to ensure that every applied weight update is the same on both stages"
 * (megatron/core/models/common/language_module/language_module.py,
 * setup_embeddings_and_output_layer; finalize_model_grads, _allreduce_word_embedding_grads)
 * [A: source]. So the last stage holds the matrix's weights, gradients and optimizer state too
 * (the analytic stage memory's head_copy, model/layout.c), and the two stages' updates wait
 * for that all-reduce. On one stage the one matrix serves both (the tie in backward).
 */
static bool head_copy(const struct build *bd)
{
	return bd->x->w->arch.tied && bd->pp > 1;
}

/* The all-reduce of the tied matrix's gradients on stage g (the first or the last) of a step of
 * M micro-batches, once the stage's last backward and its gradient reductions are done; the
 * other stage's side is joined after every stage is built. */
static int tied_allreduce(struct build *bd, uint32_t g, uint64_t M)
{
	struct stage *s = &bd->sg[g];
	struct step_machine *mc = &bd->x->mc;
	int i = g == 0 ? 0 : 1;
	int ready = task(bd, "tied embedding grads ready", -1, 0, 0, 0, NULL, NULL);
	if (ready < 0 || dep(bd, s->last_bwd_comm, ready))
		return -1;
	for (uint32_t c = 0; c < bd->vp; c++)
		if (dep(bd, bd->b_last[cell(bd, M - 1, c, g)], ready))
			return -1;
	int t = collective(bd, g, "all-reduce tied embedding grads", mc->s_comm[g], mc->pp_link[g],
			   true, 1, bd->E.gradients_bytes / bd->tp, 2, bd->pp_bw, mc->pp_alpha);
	if (t < 0 || dep(bd, ready, t))
		return -1;
	bd->tie_pre[i] = ready;
	bd->tie_ar[i] = s->last_bwd_comm = t;
	return 0;
}

/* Layers of block b in a stage of nl layers split into nb blocks. */
static uint32_t block_layers(uint32_t nl, uint32_t nb, uint32_t b)
{
	return nl / nb + (b < nl % nb ? 1 : 0);
}

/* A per-layer quantity summed over block b of nb (lb layers), with the embedding's share on the
 * stage's first block and the head's on its last. */
static double block_sum(const struct stage *s, uint32_t b, uint32_t lb, uint32_t nb, double layer,
			double embed, double head)
{
	return lb * layer + (s->embed && b == 0 ? embed : 0) + (s->head && b == nb - 1 ? head : 0);
}

/* The block's weights as they move (its decoder layers' FP8 linears at a byte a parameter
 * where --fp8-all-gather gathers them so), its gradients and trainable parameters (per TP
 * rank), and the activations it keeps for backward on its GPU. */
static double block_weights(const struct build *bd, const struct stage *s, uint32_t b, uint32_t lb,
			    uint32_t nb)
{
	return block_sum(s, b, lb, nb, bd->L.weights_bytes - bd->fp8_gathered, bd->E.weights_bytes,
			 bd->H.weights_bytes) /
	       bd->tp;
}

static double block_grads(const struct build *bd, const struct stage *s, uint32_t b, uint32_t lb,
			  uint32_t nb)
{
	return block_sum(s, b, lb, nb, bd->L.gradients_bytes, bd->E.gradients_bytes,
			 bd->H.gradients_bytes) /
	       bd->tp;
}

static double block_trainable(const struct build *bd, const struct stage *s, uint32_t b,
			      uint32_t lb, uint32_t nb)
{
	return block_sum(s, b, lb, nb, (double)bd->L.trainable_params,
			 (double)bd->E.trainable_params, (double)bd->H.trainable_params) /
	       bd->tp;
}

static double block_saved(const struct build *bd, const struct stage *s, uint32_t b, uint32_t lb,
			  uint32_t nb, const struct block_rc *m)
{
	return block_sum(s, b, lb, nb, m->saved, bd->act_embed, bd->act_head);
}

/* How many of block b's lb layers (of the chunk's nb blocks) are among the chunk's first n. */
static uint32_t block_first_n(const struct stage *s, uint32_t b, uint32_t lb, uint32_t nb,
			      uint32_t n)
{
	uint32_t rem = s->layers % nb, first = b * (s->layers / nb) + (b < rem ? b : rem);
	return first >= n ? 0 : n - first < lb ? n - first : lb;
}

/* The share of block b's activations that go to DRAM where they leave the GPU: all of them,
 * or under --activation-offload-layers those of its layers among the chunk's first N. */
static double block_offloaded(const struct build *bd, const struct stage *s, uint32_t b,
			      uint32_t lb, uint32_t nb)
{
	uint32_t n = bd->x->c->act_offload ? bd->x->c->act_offload_layers : 0;
	return n && n < s->layers ? (double)block_first_n(s, b, lb, nb, n) / lb : 1;
}

/* Whether stage s's chunk mixes layers that recompute (or offload) with layers that do not
 * (--recompute-layers, --activation-offload-layers): a folded pass's gap must be copies. */
static bool chunk_mixes_layers(const struct build *bd, const struct stage *s)
{
	uint32_t off = bd->x->c->act_offload ? bd->x->c->act_offload_layers : 0;
	return (bd->partial && bd->partial < s->layers) || (off && off < s->layers);
}

/* The recompute figures of block b (lb layers of nb) of stage s's chunk, per layer: the job's
 * where each of its layers recomputes; under --recompute-layers, where the chunk's first
 * bd->partial layers recompute and the rest do not, the mean over its layers of the job's
 * figures and none's, with the job's working sets where any of them recomputes. */
static void block_rc(const struct build *bd, const struct stage *s, uint32_t b, uint32_t lb,
		     uint32_t nb, struct block_rc *m)
{
	*m = bd->rc;
	if (!bd->partial || bd->partial >= s->layers)
		return;
	uint32_t r = block_first_n(s, b, lb, nb, bd->partial);
	if (r == lb)
		return;
	const struct block_rc *n = &bd->none;
	double w = (double)r / lb;
#define MIX(f) (m->f = w * m->f + (1 - w) * n->f)
	MIX(recompute_exec), MIX(saved), MIX(moved_saved), MIX(remat), MIX(issue_bwd);
	MIX(fixed_bwd), MIX(weight_bwd), MIX(fp8_again), MIX(eager_again), MIX(rc_ar);
	MIX(kv_again), MIX(moe_again), MIX(held);
#undef MIX
	if (r == 0) {
		m->work = n->work;
		m->fwd_work = n->fwd_work;
		m->transient = n->transient;
	}
}

/*
 * What the autograd graph of one micro-batch's pass over stage s's chunk still holds once its
 * backward is done (mdl_act_layer_held: bitsandbytes' 4-bit inputs before 0.43.2), its layers'
 * under their recompute modes and its head's, and under --graph-freed next-forward the logits
 * the model returned (mdl_act_head_logits). Each block's backward frees the rest of what it
 * kept; this goes with the graph: as backward returns, or under next-forward once the stage's
 * next forward has run (a loop whose loss and logits variables hold them until it reassigns
 * them), the step's first forward running beside the previous step's last (graph_pending)
 * [A: source]. LitGPT's QLoRA runs (bitsandbytes 0.41.1 and 0.42.0, its loop
 * next-forward: traces/published/gpu_memory.json) measured 10-18 % above the peak predicted
 * without it, 1 % below to 8 % above with.
 */
static double graph_held(const struct build *bd, const struct stage *s)
{
	uint32_t r = bd->partial && bd->partial < s->layers ? bd->partial : s->layers;
	return r * bd->rc.held + (s->layers - r) * bd->none.held +
	       (s->head ? bd->head_held + bd->head_logits : 0);
}

/* How a fetch waits for the computes before it (fetch()). */
enum fetch_wait {
	FETCH_AHEAD,	  /* the prefetch depth's blocks back */
	FETCH_TURNAROUND, /* the block just computed */
};

/* Megatron-Core's --overlap-param-gather on this configuration: the distributed optimizer's
 * all-gather of the updated weights runs in the next step, beside its first forward
 * (param_gather), not after the update. A step simulated alone runs the previous step's there:
 * the same work in the steady state. */
static bool deferred_gather(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	return x->c->overlap_param_gather && x->pl.update == UPD_GPU && !x->c->opt_in_bwd &&
	       x->c->layout.zero == 1 && dp_group(bd) > 1;
}

/* The deferred all-gather of a block's weights (deferred_gather), before the block's first
 * forward of the step, which waits for it. On the collectives stream: the data-parallel
 * communicator the gradients' reduce-scatters use. Megatron-Core's forward pre-hook dispatches
 * the next bucket's all-gather as a bucket's first module starts, so a block's may start once
 * the compute two blocks back is done. Its bytes are the block's share of what the update
 * gathers otherwise (this GPU's experts alone under expert parallelism, theirs over their own
 * group where they have one: expert_dp_apart) for its lb layers. */
static int param_gather(struct build *bd, uint32_t g, struct stage *s, double wb, uint32_t lb)
{
	struct mdl_states loc;
	mdl_ep_local(&s->st, &s->ex, bd->ekeep, &loc);
	double own = s->st.weights_bytes > 0 ? loc.weights_bytes / s->st.weights_bytes : 1;
	int t = weights_gather(bd, g, bd->x->mc.s_comm[g], wb * own, lb * bd->ex_weights / bd->tp);
	if (t < 0 || dep(bd, ring_back(s->comp_ring, s->ncomp, 2), t))
		return -1;
	return t;
}

/* Fetches a block's weights onto GPU g; returns the task after which they are there (or -1
 * when resident). Allocates the GPU buffer at the start, the compute frees it. It may start
 * once the compute the prefetch depth back has ended (FETCH_AHEAD), or the one just before it
 * (FETCH_TURNAROUND): for the first block of a backward that follows its forward at once, the
 * block forward used last, fetched again only after that forward released it, so the two
 * copies never coexist (FSDP issues the first backward all-gather from the backward hook,
 * after forward; DeepSpeed keeps the block within stage3_max_reuse_distance instead, one copy
 * either way); and for every block of a backward under BACKWARD_POST. */
static int fetch(struct build *bd, uint32_t g, struct stage *s, double wb, enum fetch_wait wait)
{
	struct step_ctx *x = bd->x;
	struct step_machine *mc = &x->mc;
	const struct step_place *pl = &x->pl;
	uint32_t D = pl->prefetch ? pl->prefetch : STEP_PREFETCH;

	if (pl->fetch == FETCH_RESIDENT)
		return -1;
	int limit = ring_back(s->comp_ring, s->ncomp, wait == FETCH_TURNAROUND ? 1 : D);
	if (pl->fetch == FETCH_GATHER) {
		int t = shard_coll(bd, g, mc->s_gather[g], "all-gather weights", false, wb, NULL);
		if (t < 0 || dep(bd, limit, t) || mem(bd, t, mc->gpu_pool[g], CAT_W, wb, ENG_AT_START))
			return -1;
		return t;
	}
	/* stream: [flash -> DRAM] -> GPU [-> all-gather of shards]. A node reads a block's flash
	 * part once: each GPU its ZeRO-3 shard, or, where every GPU copies the whole block up
	 * (DRAM-first), its 1/k of the one read they all copy from, staged once in DRAM */
	double share = pl->shard_stream ? wb / bd->dp : wb;
	double staged = (pl->shard_stream ? share : share / mc->k) * pl->weights_on_flash;
	int rd = -1;
	if (staged > 0 && mc->nvme_rd >= 0) {
		rd = flash_io(bd, "flash read weights", mc->s_nvme, staged, true);
		int lim = ring_back(s->h2d_ring, s->nh2d, D);
		if (rd < 0 || dep(bd, lim, rd) ||
		    mem(bd, rd, mc->dram_pool, CAT_W, staged, ENG_AT_START))
			return -1;
	}
	int h = host_copy(bd, g, true, "h2d weights", share);
	if (h < 0 || dep(bd, rd, h) || dep(bd, limit, h) ||
	    mem(bd, h, mc->gpu_pool[g], CAT_W, wb, ENG_AT_START) ||
	    mem(bd, h, mc->dram_pool, CAT_W, rd < 0 ? 0 : -staged, ENG_AT_END))
		return -1;
	s->h2d_ring[s->nh2d++ % 16] = h;
	if (!pl->shard_stream || bd->dp <= 1)
		return h;
	int ag = shard_coll(bd, g, mc->s_gather[g], "all-gather weights", false, wb, NULL);
	if (ag < 0 || dep(bd, h, ag))
		return -1;
	return ag;
}

/*
 * A block's compute on GPU g: its GEMM FLOPs at the sustained rate, then the memory-bound
 * kernels around them (norms, activations, dropout, softmax, residual adds) moving membytes
 * through HBM, serially on the same stream, then Megatron's synchronous TP all-reduces (two a
 * layer pass in tp_allreduces, as tp_passes counts them for its layers). The
 * memory-bound time is what makes small layers slower per FLOP than large ones: it grows with
 * tokens x hidden while GEMM FLOPs grow with tokens x hidden^2 (Megatron's table, published.md
 * C.1: 44 % of peak at 1.7B, 52 % at 530B-1T).
 */
static int compute(struct build *bd, uint32_t g, struct stage *s, const char *name,
		   double flops, double membytes, double fixed, double issue, double tp_allreduces,
		   double kv_passes, double shared, int after, int *tp_task)
{
	struct step_machine *mc = &bd->x->mc;
	/* the memory-bound kernels between the GEMMs run serially on the same stream: their bytes
	 * become FLOP-equivalents at the ratio of the two rates, exact while the compute stream
	 * is the only user of this GPU's compute (it is), as do the matrix kernels' fixed seconds;
	 * and the block lasts at least as long as the host takes to launch its kernels (issue
	 * seconds) */
	double cap = eng_resource_at(bd->x->e, mc->sm[g])->capacity;
	bool ep_hidden = bd->ep > 1 && tp_allreduces > 0 && bd->ep_hidden;
	/* a flex dispatcher's kernels hold their SMs while the all-to-alls beside the pass run
	 * (DeepEP's normal kernels and HybridEP's are persistent on Buffer.num_sms SMs) [A:
	 * source], so the pass's kernels run on the rest for that long: a compute-bound pass is
	 * longer by the exchanges' time alone x their share of the SMs (a2a_sm), added to its
	 * fixed seconds */
	double margin = ep_hidden ? tp_allreduces * ep_seconds(bd, g) * bd->a2a_sm : 0;
	/* --shared-expert-overlap: the shared experts' part of the block leaves it for a task of
	 * its own beside the all-to-alls (below) */
	bool beside = bd->shared_overlap && !ep_hidden && bd->ep > 1 && tp_allreduces > 0 &&
		      shared > 0;
	double main = flops - (beside ? shared : 0);
	double work = fmax(main / bd->tp + membytes * cap / bd->hbm_bw + (fixed + margin) * cap,
			   issue * cap);
	/* what runs beside the block on another stream (the context-parallel ring of its keys and
	 * values, --tp-comm-overlap's chunked collectives, --ep-overlap's all-to-alls) moves
	 * tensors the block makes, so it starts with the block, not ahead of it: a mark on the
	 * compute stream where the block begins */
	bool ring = bd->cp > 1 && kv_passes > 0;
	bool tp_overlap = bd->tp > 1 && tp_allreduces > 0 && bd->x->c->tp_comm_overlap;
	double passes = tp_allreduces / 2; /* layer passes: Megatron's two collectives each */
	int begin = -1;
	if (ring || tp_overlap || ep_hidden) {
		begin = task(bd, "block start", mc->s_comp[g], 0, 0, 0, NULL, NULL);
		if (begin < 0 || dep(bd, after, begin))
			return -1;
	}
	int c = task(bd, name, mc->s_comp[g], work, 0, 1, &mc->sm[g], NULL);
	if (c < 0 || dep(bd, after, c))
		return -1;
	s->comp_ring[s->ncomp++ % 16] = c;
	*tp_task = c;
	if (tp_overlap) {
		/* Megatron-Core's --tp-comm-overlap: the sequence-parallel all-gathers and
		 * reduce-scatters split into chunks pipelined with the GEMMs that produce and
		 * consume them (Transformer Engine userbuffers), so the block takes the longer of
		 * the two; the compute stream waits for the collectives before the next block */
		int t = collective(bd, g, "tp collectives (overlapped)", mc->s_tp[g],
				   mc->tp_link[g], true, passes * bd->tpp.dense, bd->boundary,
				   bd->tp, bd->tp_bw, mc->tp_alpha);
		int j = task(bd, "tp join", mc->s_comp[g], 0, 0, 0, NULL, NULL);
		if (t < 0 || j < 0 || dep(bd, begin, t) || dep(bd, t, j))
			return -1;
		*tp_task = j;
	} else if (bd->tp > 1 && tp_allreduces > 0) {
		int t = collective(bd, g, "tp all-reduce", mc->s_comp[g], mc->tp_link[g], true,
				   passes * bd->tpp.dense, bd->boundary, bd->tp, bd->tp_bw,
				   mc->tp_alpha);
		if (t < 0 || dep(bd, c, t))
			return -1;
		*tp_task = t;
	}
	if (bd->etp > 1 && tp_allreduces > 0 && bd->tpp.routed > 0) {
		/* the routed experts' gathers and scatters over the ranks an expert spans, outside
		 * the userbuffers (tp_passes) */
		int t = collective(bd, g, "tp expert gathers", mc->s_comp[g], mc->tp_link[g], true,
				   passes * bd->tpp.routed, bd->boundary * bd->etp / bd->tp, bd->etp,
				   bd->tp_bw, mc->tp_alpha);
		if (t < 0 || dep(bd, *tp_task, t))
			return -1;
		*tp_task = t;
	}
	if (ep_hidden) {
		/* --ep-overlap: the pass runs layer by layer beside another micro-batch's, each
		 * one's all-to-alls behind the other's attention and MLP (Megatron-Core's combined
		 * 1F1B, combined_1f1b.py: "EP A2A in forward step is hidden by the attention/mlp
		 * computation in the backward step, and vice versa") [A: source]. Built as each
		 * pass's all-to-alls beside its own compute on a stream of their own, so a pair of
		 * passes takes max(Cf, Af) + max(Cb, Ab): max(Cf + Cb, Af + Ab) where both are
		 * compute-bound or both communication-bound, longer where one is and the other is
		 * not (the pairing itself is not built) */
		int t = ep_exchange(bd, g, "ep all-to-all (overlapped)", mc->s_ep[g],
				    tp_allreduces);
		int j = task(bd, "ep join", mc->s_comp[g], 0, 0, 0, NULL, NULL);
		if (t < 0 || j < 0 || dep(bd, begin, t) || dep(bd, t, j) || dep(bd, *tp_task, j))
			return -1;
		*tp_task = j;
	} else if (beside) {
		/* Megatron-Core's moe_shared_expert_overlap: the shared experts' linears on a
		 * stream of their own, FC1 while the dispatch runs and FC2 while the combine does
		 * (shared_experts.py, pre_forward_comm ... get_output, called from inside the token
		 * dispatcher; their backward on the same stream) [A: source]: identical layers, so
		 * a block takes the longer of its shared experts and its all-to-alls after the rest
		 * of its compute */
		int t = ep_exchange(bd, g, "ep all-to-all (shared experts beside)", mc->s_ep[g],
				    tp_allreduces);
		int sh = task(bd, "shared experts", mc->s_comp[g], shared / bd->tp, 0, 1, &mc->sm[g],
			      NULL);
		int j = task(bd, "ep join", mc->s_comp[g], 0, 0, 0, NULL, NULL);
		if (t < 0 || sh < 0 || j < 0 || dep(bd, *tp_task, t) || dep(bd, *tp_task, sh) ||
		    dep(bd, t, j))
			return -1;
		*tp_task = j;
	} else if (bd->ep > 1 && tp_allreduces > 0) {
		/* the MoE layers' dispatch and combine, two per layer pass as the TP all-reduces
		 * are, on the compute path (the experts wait for their tokens) */
		int t = ep_exchange(bd, g, "ep all-to-all", mc->s_comp[g], tp_allreduces);
		if (t < 0 || dep(bd, *tp_task, t))
			return -1;
		*tp_task = t;
	}
	if (ring) {
		/* context parallelism: the keys and values go round the ring while attention
		 * computes on the blocks already there (Megatron-Core's p2p ring, overlapped), so
		 * the block takes the longer of the two */
		int t = group_exchange(bd, g, "cp ring keys/values", mc->s_cp[g], kv_passes,
				       bd->kv, bd->cp, bd->tp);
		int j = task(bd, "cp join", mc->s_comp[g], 0, 0, 0, NULL, NULL);
		if (t < 0 || j < 0 || dep(bd, begin, t) || dep(bd, t, j) || dep(bd, *tp_task, j))
			return -1;
		*tp_task = j;
	}
	return c;
}

/*
 * Blocks of a pass. A stage whose weights stay resident and whose pass overlaps nothing with
 * its compute (no gradient reduction or copy per block: gpu policy, ZeRO 0-1, not the last
 * micro-batch; or a single data-parallel rank) runs as one block: its compute and its TP
 * all-reduces are serial on one stream either way, so one task of each gives the same times and
 * the same peaks (all saved activations plus one layer's working set), with far fewer events.
 */
static uint32_t blocks(const struct build *bd, const struct stage *s, bool last_backward)
{
	const struct step_ctx *x = bd->x;
	bool overlap = x->pl.fetch != FETCH_RESIDENT || x->pl.grads == GRADS_HOST ||
		       x->pl.ckpt != W_GPU || x->c->opt_in_bwd ||
		       (dp_group(bd) > 1 && !x->c->no_grad_overlap &&
			(x->c->layout.zero >= 2 || last_backward));
	return overlap ? s->nb : 1;
}

bool step_uses_flash(const struct step_place *pl)
{
	return pl->weights_on_flash > 0 || pl->grads_on_flash > 0 || pl->opt_on_flash > 0 ||
	       pl->ckpt == W_FLASH;
}

double step_host_grad_bytes(const struct step_place *pl)
{
	return pl->host_grad_bytes > 0 ? pl->host_grad_bytes : HOST_GRAD_BYTES;
}

/* Gradient copies of gb bytes a block may have in flight to the host before backward waits: the
 * buckets' worth (GRAD_BUCKETS x reduce_bucket), at least two, at most the ring's 16. */
uint32_t step_grads_inflight(const struct sim_config *c, const struct mdl_states *layer,
			     double gb)
{
	double per_param = layer->gradients_bytes / fmax(1.0, (double)layer->trainable_params);
	double budget = GRAD_BUCKETS * step_reduce_bucket(c) * per_param;
	return gb > 0 ? (uint32_t)fmin(16, fmax(2, floor(budget / gb))) : 16;
}

static uint32_t grads_inflight(const struct build *bd, double gb)
{
	return step_grads_inflight(bd->x->c, &bd->L, gb);
}

/*
 * Folding (engine.h, eng_fold). A pass over per-layer blocks keeps blocks at each end, at least
 * fold_edge(), and leaves its middle out: the engine checks that the pass runs periodically
 * across the gap, with a period of one block or a few (probes up to ENG_FOLD_PROBES blocks before
 * the gap), and adds the left-out blocks' time, energy, work and memory, exactly. Only where the
 * run's histories are not kept (a search reads peaks and totals), for one stage without
 * interleaving (a pipeline's stages are built one after another, so its live tasks are not near
 * each other in the graph). A pass the engine found periodic with a period that does not divide
 * its gap is built again with a gap it divides; one it found not periodic is built again wide,
 * with FOLD_WIDE_LEFT more blocks before the gap (a longer ramp: drives that reads and writes
 * share settle into a cycle of several blocks after several more), and built whole where that
 * fails too (x->fold_unit).
 */
#define FOLD_EDGE 6     /* blocks kept at each end at least: the ramp-up before the period
			 * settles, and the window the engine compares after the gap [U: a cost, not
			 * a model constant: a pass whose ramp is longer is rebuilt] */
#define FOLD_MIN_GAP 4  /* fewer left out saves less than a rebuild costs [U] */
/* a wide fold's further blocks before the gap: a ramp, and every probe [U: a cost; the 405B
 * plan's tiered passes with checkpoints on one or two drives cycle every 4 to 7 blocks after
 * 10 to 20] */
#define FOLD_WIDE_LEFT (2 * ENG_FOLD_PROBES)

/* A pass being folded: its gap, the blocks before it, and the probes (a[j] j + 1 blocks before
 * the gap's far side, b just after it). */
struct fold_pass {
	uint32_t gap, left, seg, na;
	int a[ENG_FOLD_PROBES], b;
};

/* How far a block reaches in build order, in blocks: back, to the tasks it waits for (the
 * prefetch depth, the gradient copies in flight, the checkpoint reads' three); ahead, to the
 * tasks that may run while it computes: a streamed weight read waits for the copy up prefetch
 * blocks earlier, which waits for the compute prefetch blocks before that (twice the depth);
 * an all-gather, or a checkpoint read, waits for a compute at most that depth back (once). */
static void fold_reach(const struct build *bd, uint32_t *back, uint32_t *ahead)
{
	const struct step_place *pl = &bd->x->pl;
	uint32_t d = pl->prefetch > 3 ? pl->prefetch : 3;
	*back = d;
	if (pl->grads == GRADS_HOST) {
		uint32_t f = grads_inflight(bd, bd->L.gradients_bytes / bd->tp);
		*back = f > *back ? f : *back;
	}
	*ahead = (pl->fetch == FETCH_STREAM ? 2 * d : d) + 1;
}

/* Blocks a folded pass keeps at each end: FOLD_EDGE, and enough that the engine's window (the
 * reach each way, and one block) lies inside the pass on both sides of the gap: every block after
 * the gap then depends on, and runs beside, blocks of its own pass as in the whole graph, and the
 * next pass's first blocks reach back into this pass's last ones only. */
static uint32_t fold_edge(const struct build *bd)
{
	uint32_t back, ahead;
	fold_reach(bd, &back, &ahead);
	uint32_t e = (back > ahead ? back : ahead) + 2;
	return e > FOLD_EDGE ? e : FOLD_EDGE;
}

/* The fold of a pass of nb blocks: fp->gap 0 when it is built whole. Probes j + 1 blocks before
 * the gap's far side whose windows lie inside the pass: blocks left - j - 1 - back - 1 >= 0. */
static uint32_t fold_gap(struct build *bd, const struct stage *s, uint32_t nb, struct fold_pass *fp)
{
	struct step_ctx *x = bd->x;
	*fp = (struct fold_pass){.b = -1};
	if (eng_keeps_history(x->e) || bd->pp != 1 || bd->vp != 1 || nb != s->layers ||
	    nb < 2 * bd->edge + FOLD_MIN_GAP || chunk_mixes_layers(bd, s))
		return 0;
	fp->seg = bd->nseg++;
	if (fp->seg >= STEP_FOLD_PASSES || x->nfold >= ENG_FOLDS)
		return 0;
	uint8_t unit = x->fold_unit[fp->seg];
	if (unit == STEP_FOLD_WHOLE)
		return 0;
	fp->left = bd->edge + (unit & STEP_FOLD_WIDE ? FOLD_WIDE_LEFT : 0);
	if (nb < fp->left + bd->edge + FOLD_MIN_GAP)
		return 0;
	fp->gap = nb - fp->left - bd->edge;
	unit &= (uint8_t)~STEP_FOLD_WIDE;
	if (unit > 1) { /* a gap the period divides: the rest built before it */
		fp->left += fp->gap % unit;
		fp->gap -= fp->gap % unit;
	}
	/* left >= fold_edge() >= back + 2: one probe at least */
	uint32_t back, ahead;
	fold_reach(bd, &back, &ahead);
	fp->na = fp->left - back - 1;
	fp->na = fp->na < ENG_FOLD_PROBES ? fp->na : ENG_FOLD_PROBES;
	if (fp->gap < FOLD_MIN_GAP)
		fp->gap = 0;
	return fp->gap;
}

/* Block b (in build order) of a folded pass computes in task c: a probe when it is one. */
static void fold_probe(struct fold_pass *fp, uint32_t b, int c)
{
	if (!fp->gap)
		return;
	if (b < fp->left && b + fp->na >= fp->left)
		fp->a[fp->left - 1 - b] = c;
	else if (b == fp->left + fp->gap)
		fp->b = c;
}

/* Registers the fold of a pass whose probes are the computes of its blocks: the engine
 * compares the blocks within reach (fold_reach). */
static int fold_register(struct build *bd, const struct fold_pass *fp, bool backward)
{
	uint32_t per = (uint32_t)(fp->b - fp->a[0]), back, ahead;
	fold_reach(bd, &back, &ahead);
	if (eng_fold(bd->x->e, fp->a, fp->na, fp->b, (back + 1) * per, (ahead + 1) * per,
		     fp->gap) < 0)
		return eerr(bd);
	bd->x->fold_seg[bd->x->nfold++] = (uint8_t)fp->seg;
	if (backward)
		bd->x->fold_bwd |= 1ull << fp->seg;
	return 0;
}

static int forward(struct build *bd, uint32_t g, uint64_t k, uint32_t ch)
{
	struct step_ctx *x = bd->x;
	struct step_machine *mc = &x->mc;
	struct stage *s = &bd->sg[g];
	int pool = mc->gpu_pool[g], prev = -1;

	/* the step's first forward through the chunk takes the deferred all-gathers of its
	 * weights layer by layer (Megatron-Core's buckets are a fraction of a layer) */
	bool gather = k == 0 && deferred_gather(bd);
	uint32_t nb = gather ? s->layers : blocks(bd, s, false);
	struct fold_pass fp;
	uint32_t gap = fold_gap(bd, s, nb, &fp);
	for (uint32_t b = 0; b < nb; b++) {
		if (gap && b == fp.left)
			b += gap;
		uint32_t lb = block_layers(s->layers, nb, b);
		double wb = block_weights(bd, s, b, lb, nb);
		int f = gather ? param_gather(bd, g, s, wb, lb) : fetch(bd, g, s, wb, FETCH_AHEAD);
		if (gather && f < 0)
			return -1;
		struct block_rc m;
		block_rc(bd, s, b, lb, nb, &m);
		bool runs_head = s->head && b == nb - 1;
		double flops = lb * bd->F.layer_fwd_exec + (runs_head ? bd->F.head_fwd : 0);
		/* memory-bound traffic: each activation of the layer's inventory written once and
		 * read once (layer norms, activations, dropout, softmax, residuals), and eager norms'
		 * and rotary's passes and the MoE token dispatcher's copies beyond that; the loss's
		 * kernels and a quantised head's dequantisation */
		double bytes = 2.0 * bd->act_all + bd->weights.fwd + bd->fp8_fwd + bd->eager_fwd +
			       bd->moe_pass + (k == 0 ? bd->fp8_first : 0);
		double head_bytes = runs_head ? bd->head_dequant + bd->loss_fwd : 0;
		int end, c = compute(bd, g, s, "forward", flops, lb * bytes + head_bytes,
				     lb * bd->fixed_fwd, lb * bd->issue_fwd, 2.0 * lb, lb,
				     lb * bd->shared_fwd, f, &end);
		if (c < 0)
			return -1;
		/* checkpoints bound for flash leave through two DRAM staging buffers (the room
		 * the policies keep for them): a block's copy down waits for the write of the one
		 * two before it, and its forward for the copy down of the one two before, so the
		 * GPU holds at most two blocks' checkpoints waiting to leave, and forward runs at
		 * the drives' pace when they are slower */
		bool staged = x->pl.ckpt == W_FLASH && mc->nvme_wr >= 0;
		if (staged && dep(bd, ring_back(s->ck_down, s->nck, 2), c))
			return -1;
		/* activation offloading keeps few copies pending, so forward runs at the copies'
		 * pace when they are slower: torchtune's OffloadActivations makes the compute
		 * stream wait once more than max_fwd_stash_size (5) tensors wait to go down
		 * (training/_activation_offloading.py), Transformer Engine's layer offload
		 * (--activation-offload-layers) double-buffers layers; a block's copy down runs
		 * beside the next block's forward, and the one after waits for it */
		if (x->c->act_offload && dep(bd, ring_back(s->ck_down, s->nck, 2), c))
			return -1;
		if (b == 0) {
			bd->f_first[cell(bd, k, ch, g)] = c;
			TRY(dep(bd, s->mb_reduced, c)); /* next_forward_waits */
		}
		fold_probe(&fp, b, c);
		double saved = block_saved(bd, s, b, lb, nb, &m);
		/* the head runs after the block's layers have released their working set: its
		 * logits appear at the end */
		double head = runs_head ? bd->act_head : 0;
		TRY(mem(bd, c, pool, CAT_A, saved - head, ENG_AT_START));
		if (m.transient) {
			TRY(mem(bd, c, pool, CAT_A, m.fwd_work, ENG_AT_START));
			TRY(mem(bd, c, pool, CAT_A, -m.fwd_work, ENG_AT_END));
		}
		/* one quantised linear's weight dequantised at a time, freed once its GEMM ran, or
		 * DoRA's norm of one adapted weight; a quantised head's copies last (they and the
		 * layers' never coexist) */
		double live = runs_head ? fmax(bd->weight_live, bd->head_live) : bd->weight_live;
		TRY(mem(bd, c, pool, CAT_A, live, ENG_AT_START));
		TRY(mem(bd, c, pool, CAT_A, -live, ENG_AT_END));
		if (head > 0) /* after the working set is released (effects apply in order) */
			TRY(mem(bd, c, pool, CAT_A, head, ENG_AT_END));
		if (b == nb - 1 && s->graph_pending > 0) { /* the loop lets the last graph go */
			TRY(mem(bd, c, pool, CAT_A, -s->graph_pending, ENG_AT_END));
			s->graph_pending = 0;
		}
		if (f >= 0 && !gather) /* a fetched block's buffer; gathered weights stay */
			TRY(mem(bd, c, pool, CAT_W, -wb, ENG_AT_END));
		double share = block_offloaded(bd, s, b, lb, nb);
		if (x->pl.ckpt != W_GPU && share > 0) {
			/* the head's tensors stay: the loss uses them at once (DeepSpeed's
			 * cpu_checkpointing moves checkpoints only; torchtune runs the output
			 * layer under a NoOpManager) */
			double off = share * (saved - head);
			/* DeepSpeed's cpu_checkpointing copies a layer's input into pageable CPU
			 * buffers (checkpointing.py, partition_activations: copy_ into new_empty
			 * CPU tensors, or .cpu()) before it runs the layer: a synchronous copy the
			 * next layer's kernels wait for [A: DeepSpeed source, 0.3 to 2026] */
			int o = x->pl.ckpt_sync ? host_copy_sync(bd, g, false, "d2h checkpoint", off)
						: host_copy(bd, g, false, "d2h checkpoint", off);
			if (o < 0 || dep(bd, c, o) ||
			    (staged && dep(bd, ring_back(s->ck_write, s->nck, 2), o)) ||
			    mem(bd, o, mc->dram_pool, CAT_A, off, ENG_AT_START) ||
			    mem(bd, o, pool, CAT_A, -off, ENG_AT_END))
				return -1;
			s->last_ckpt_down = o;
			if (staged) {
				/* on to the drives: the DRAM copy is only staging */
				int w = flash_io(bd, "flash write checkpoint", mc->s_ckpt, off, false);
				if (w < 0 || dep(bd, o, w) ||
				    mem(bd, w, mc->flash_pool, CAT_A, off, ENG_AT_START) ||
				    mem(bd, w, mc->dram_pool, CAT_A, -off, ENG_AT_END))
					return -1;
				s->last_ckpt_down = w;
				s->ck_down[s->nck % 16] = o;
				s->ck_write[s->nck++ % 16] = w;
			} else if (x->c->act_offload) {
				s->ck_down[s->nck++ % 16] = o;
			}
		}
		prev = end;
	}
	if (gap && fold_register(bd, &fp, false))
		return -1;
	if (g + 1 < bd->pp || ch + 1 < bd->vp) {
		int t = p2p_send(bd, g, "p2p send activations");
		if (t < 0 || dep(bd, prev, t))
			return -1;
		bd->f_send[cell(bd, k, ch, g)] = t;
	}
	return 0;
}

/*
 * Host-side optimizer work on a share (tile) of parameters: [flash read] -> CPU AdamW -> [flash
 * write]. Serial, each tile is read, stepped and written before the next is read, all on the
 * CPU optimizer stream: DeepSpeed's optimizer swapper without pipeline_read / pipeline_write
 * (both false by default, offload_config.py; calibration-power-cost.md 4.5). pipe_read: reads
 * run on a stream of their own, the next tile's beside this one's step (the read of tile n
 * waits for the step of tile n-2: two read buffers); pipe_write: writes likewise, the previous
 * tile's beside this one's step (the step of tile n waits for the write of tile n-2). With both
 * the CPU and the drives are busy at once: DeepSpeed's pipelined swapper, and the overlap
 * Fuyou and Ratel build (published.md 9.4). A read ahead may start after `ahead`. Returns the
 * last task; *stepped, when asked, the CPU step (what takes the tile's gradients).
 *
 * DRAM: a tile here is a whole block (tiered) or sub-group (ZeRO-Infinity) for the timing, but
 * the state streams through pinned buffers far smaller than that, so the tiles in flight charge
 * no DRAM pool: ZeRO-Infinity's buffers are allocated once (pol_zero_infinity's dram_fixed), and
 * tiered's lie within MDL_DRAM_RESERVE. Charging four whole layers instead (two read ahead,
 * two written behind) would make Phison's verified 70B configuration, 2 x RTX 4000 Ada with
 * 128 GB of DRAM (published.md 1.4d, 9.5), need 131 GiB: it does not stage at layer size.
 */
static int host_update(struct build *bd, struct stage *s, double params, double read_flash,
		       double write_flash, int after, int ahead, int *stepped)
{
	struct step_machine *mc = &bd->x->mc;
	const struct step_place *pl = &bd->x->pl;
	int rd = -1, wr = -1, slot = (int)(s->nopt % 2);
	if (read_flash > 0 && mc->nvme_rd >= 0) {
		rd = flash_io(bd, "flash read optimizer", pl->pipe_read ? mc->s_opt_rd : mc->s_cpu,
			      read_flash, true);
		if (rd < 0 || dep(bd, pl->pipe_read ? ahead : after, rd) ||
		    (pl->pipe_read && dep(bd, s->opt_step[slot], rd)))
			return -1;
	}
	int path[2] = {mc->cpu, mc->dram};
	float sc[2] = {1, (float)SIM_ADAM_BYTES_PER_PARAM};
	int u = task(bd, "cpu adamw", mc->s_cpu, params, 0, 2, path, sc);
	if (u < 0 || dep(bd, after, u) || dep(bd, rd, u) ||
	    (pl->pipe_write && dep(bd, s->opt_write[slot], u)))
		return -1;
	if (write_flash > 0 && mc->nvme_wr >= 0) {
		wr = flash_io(bd, "flash write optimizer", pl->pipe_write ? mc->s_opt_wr : mc->s_cpu,
			      write_flash, false);
		if (wr < 0 || dep(bd, u, wr))
			return -1;
	}
	s->opt_step[slot] = u;
	s->opt_write[slot] = wr >= 0 ? wr : u;
	s->nopt++;
	if (stepped)
		*stepped = u;
	return wr >= 0 ? wr : u;
}

/*
 * A GPU update over optimizer bytes opt whose paged share lives in host DRAM: bitsandbytes'
 * paged optimizers prefetch their unified-memory states before stepping (Optimizer8bit.step:
 * page_mng.prefetch_all, cudaMemPrefetchAsync) and the driver writes the dirty pages back when
 * the next pass needs the room, so the update waits for the share up and the share goes down
 * after it, both over PCIe [B: bitsandbytes source]. The pages cycle tensor by tensor: the GPU
 * never holds the whole share at once (no pool effect). Returns the update task; *last the
 * task after which its states are home again.
 */
static int paged_update(struct build *bd, uint32_t g, const char *name, double params,
			double opt, int after, int *last)
{
	struct step_machine *mc = &bd->x->mc;
	double paged = opt * bd->x->pl.opt_paged;
	int up = -1;
	if (paged > 0) {
		up = host_copy(bd, g, true, "h2d paged optimizer", paged);
		if (up < 0 || dep(bd, after, up))
			return -1;
	}
	/* PyTorch's multi-tensor AdamW: three times the traffic, and a copy of the second moment
	 * while it steps */
	bool foreach = bd->x->c->opt_foreach && bd->x->job.optimizer == MDL_ADAMW;
	float sc = (float)(mdl_job_update_bytes(&bd->x->job) *
			   (foreach ? SIM_FOREACH_ADAM_PASSES : 1));
	int u = task(bd, name, mc->s_comp[g], params, 0, 1, &mc->hbm[g], &sc);
	if (u < 0 || dep(bd, after, u) || dep(bd, up, u))
		return -1;
	double v = mdl_job_state_bytes(&bd->x->job) * params;
	if (foreach && (mem(bd, u, mc->gpu_pool[g], CAT_O, v, ENG_AT_START) ||
			mem(bd, u, mc->gpu_pool[g], CAT_O, -v, ENG_AT_END)))
		return -1;
	*last = u;
	if (paged > 0) {
		int down = host_copy(bd, g, false, "d2h paged optimizer", paged);
		if (down < 0 || dep(bd, u, down))
			return -1;
		*last = down;
	}
	return u;
}

/* The two micro-batches of stage 0 whose ends are one steady period apart (k0 and k0 + span):
 * without PP the 1st and 2nd; with PP its 2nd and 3rd (after the first has drained the
 * pipeline's fill); interleaved, the first micro-batches of the 1st and 2nd groups, pp apart.
 * (Each micro-batch's gradient traffic is done before the next forward where it would lag:
 * next_forward_waits.) */
static void steady_marks(const struct build *bd, uint64_t *k0, uint64_t *span)
{
	*k0 = bd->vp > 1 ? 0 : bd->pp > 1 ? 1 : 0;
	*span = bd->vp > 1 ? bd->pp : 1;
}

/*
 * Transformers' gradient checkpointing around FSDP-wrapped layers (sim_config.ckpt_outside).
 * The reentrant checkpoint's backward runs each layer again on detached copies of its inputs,
 * leaves whose .grad the layer's backward fills; FSDP's pre-forward, running again in that
 * recompute, registers on them, where the unit's FlatParameter is frozen (a LoRA or QLoRA base
 * layer's: PEFT's adapters are FSDP units of their own), the hook that reshards it once their
 * gradients are computed (torch/distributed/fsdp/_runtime_utils.py,
 * _register_post_backward_reshard_only_hook, PyTorch 2.1 and later). That multi-grad hook's
 * closure holds the inputs' gradient accumulators (torch/autograd/graph.py,
 * register_multi_grad_hook: grad_fns), and an AccumulateGrad holds its leaf, so each layer's
 * checkpointed input and its gradient stay until FSDP removes the hooks as backward ends
 * (_finalize_params) [B: the sources' code as read]: by then a second copy of every checkpoint.
 * IBM fms-acceleration's Llama-3-8B LoRA and QLoRA runs with Liger-Kernel's loss grow 0.94 GiB a
 * sequence of 4,096 tokens more on two and four A100s than on one, where their 32 layers'
 * checkpoints are 1.0 GiB. Not DeepSpeed's ZeRO-3, whose hooks are its own, nor a partial
 * recompute (Megatron's).
 */
static bool holds_checkpoints(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	/* FSDP's units on the GPUs, or FSDP's CPU offload, which the zero3-offload policy runs
	 * where no DeepSpeed config says it is DeepSpeed's */
	bool fsdp = x->pl.grads == GRADS_LOCAL || !strcmp(x->c->policy->name, "zero3-offload");
	return x->c->ckpt_outside && fsdp && x->c->layout.zero == 3 &&
	       dp_group(bd) > 1 && !x->c->deepspeed && x->job.method != MDL_FULL &&
	       x->job.recompute == MDL_RC_FULL && !x->job.recompute_layers;
}

/* ZeRO-2/3 keeps a gradient shard; a block's whole gradients exist from its backward until their
 * reduce-scatter has run (PyTorch FSDP's post-backward hook reduce-scatters them and frees the
 * unsharded ones; DeepSpeed copies them into its reduce bucket instead, counted there; an
 * optimizer stepped in backward frees them itself). */
static bool whole_grads_until_reduced(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	return (x->c->layout.zero >= 2 || x->pl.shard_stream) && dp_group(bd) > 1 &&
	       !x->c->opt_in_bwd && !x->c->deepspeed;
}

/*
 * Whether the step's micro-batches but its last keep their gradients whole on the GPU and
 * unreduced (--grad-sync last), so that every layer's whole gradients stand from the first
 * micro-batch's backward to the last one's reduce-scatter. The Hugging Face Trainer runs each
 * micro-batch but the last under accelerate's no_sync (transformers trainer.py,
 * _inner_training_loop, 4.46 and later: "functools.partial(self.accelerator.no_sync,
 * model=model) if i != len(batch_samples) - 1 and self.accelerator.distributed_type !=
 * DistributedType.DEEPSPEED", later versions syncing where sync_each_batch is set too; before
 * 4.46 accelerate's accumulate, which does the same), and on PyTorch FSDP no_sync leaves each
 * unit's gradient unsharded: FSDP1's post-backward hook reshards the parameters and returns before
 * its reduce-scatter, the gradient staying in the unsharded flat parameter's .grad, and the
 * docstring warns "FSDP will accumulate the full model gradients (instead of gradient shards)
 * until the eventual sync" (torch/distributed/fsdp/fully_sharded_data_parallel.py, no_sync;
 * _runtime_utils.py, _post_backward_hook); FSDP2's set_requires_gradient_sync(False) keeps
 * them the same way [A: the sources as read]. The later micro-batches add into them in place
 * (AccumulateGrad; its elementwise pass is no more counted here than where any other
 * framework accumulates), and only the last reduce-scatters, leaving the shard. Under FSDP's
 * CPU offload (policy zero3-offload) the whole gradients stay on the GPU as well and only the
 * last micro-batch's reduced shard goes down ("When used with CPU offloading, the gradients
 * will not be offloaded to CPU when inside the context manager. Instead, they will only be
 * offloaded right after the eventual sync": the same docstring); FSDP1 accumulates across
 * micro-batches under CPU offload only this way (_flat_param.py, prepare_gradient_for_backward:
 * "Gradient accumulation outside `no_sync()` does not work with CPU offloading"). One
 * micro-batch a step has nothing to defer.
 */
static bool grads_synced_last(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	return x->c->grad_sync_last && (x->pl.grads == GRADS_LOCAL || x->pl.grads == GRADS_HOST) &&
	       whole_grads_until_reduced(bd) && x->built > 1;
}

/*
 * Whether each micro-batch's backward reduce-scatters its gradients block by block beside the
 * compute (ZeRO-2/3 and FSDP across data-parallel ranks, overlapped, one pipeline stage; under
 * PP these layouts reduce at the last micro-batch only). The compute then waits for those
 * reductions twice, so unreduced gradients do not pile up where the links are slower than
 * the backward:
 * - a block's backward waits for the reduce-scatter of the block two before it in backward.
 *   FSDP2's post-backward makes the compute stream wait for the previous group's
 *   reduce-scatter before it issues its own (torch/distributed/fsdp/_fully_shard/
 *   _fsdp_param_group.py, post_backward: comm_ctx.reduce_scatter_state.event); DeepSpeed fills
 *   each of its two reduce buckets again only once its reduction has run (stage_1_and_2.py,
 *   overlap_comm's double ipg buffer). FSDP1 has no such wait within a backward (it frees the
 *   unsharded gradients by record_stream), so where its links are the slower its peak can be
 *   higher than this one by up to a micro-batch's gradients;
 * - the next micro-batch's forward waits for all of them: FSDP's final backward callback makes
 *   the compute stream wait for the reduce-scatter stream (FSDP1's
 *   _post_backward_final_callback, FSDP2's _root_post_backward_final_callback), DeepSpeed
 *   synchronizes in its gradient epilogue (stage_1_and_2.py with overlap_comm, stage3.py's
 *   reduce_and_partition_stream: independent_gradient_partition_epilogue) [A: the sources as
 *   read].
 * The waits are between blocks, which can hold several layers where weights stay put (ZeRO-2):
 * looser in time than FSDP2's per layer; in memory a block counts two layers' unreduced
 * gradients at a time (backward, spare).
 */
static bool reduce_waits(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	return x->pl.grads == GRADS_LOCAL && !x->c->no_grad_overlap && dp_group(bd) > 1 &&
	       (x->c->layout.zero >= 2 || x->pl.shard_stream) && bd->pp == 1;
}

/*
 * Whether the next micro-batch's forward waits for the gradient traffic of the backward before
 * it: the reduce-scatters of reduce_waits, and DeepSpeed's offload copies, which run on its one
 * reduction stream (grads_to_host) that the same epilogue synchronizes (ZeRO-1/2 with
 * overlap_comm; without it they run on the compute stream itself). Not tiered's streams,
 * which the GPU already waits for within each micro-batch.
 */
static bool next_forward_waits(const struct build *bd)
{
	const struct step_place *pl = &bd->x->pl;
	return reduce_waits(bd) || (pl->grads == GRADS_HOST && pl->grads_copy != COPY_PLAIN);
}

/* Gradients without a framework's buffer for them (no DDP buckets, no Megatron main_grad, no
 * DeepSpeed partitions): one GPU, where PyTorch makes each gradient in backward
 * (AccumulateGrad), or FSDP's shards (zero 2 or 3 across data-parallel ranks, no expert
 * parallelism, whose experts shard otherwise: mdl_ep_shard), each written
 * into the flat parameter's .grad by its block's reduce-scatter in backward
 * (torch/distributed/fsdp/_runtime_utils.py, _post_backward_hook -> _reduce_grad ->
 * _accumulate_sharded_grad) [A: PyTorch source]. Either way the training loop frees them after
 * the optimizer step (optimizer.zero_grad(set_to_none=True), the default since PyTorch 2.0, as
 * Hugging Face's Trainer, torchtune and Lightning call it), so the first micro-batch's forward
 * and loss run without them. */
static bool grads_made_in_backward(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	const struct mdl_layout *l = &x->c->layout;
	return x->pl.update == UPD_GPU && x->pl.grads == GRADS_LOCAL && !x->c->opt_in_bwd &&
	       !x->c->deepspeed &&
	       (dp_group(bd) == 1 || (whole_grads_until_reduced(bd) && bd->ep == 1)) &&
	       l->tp == 1 && l->pp == 1;
}

/* The share of a block's or stage's gradients a rank keeps once they are reduced: 1, or FSDP's
 * shard (grads_made_in_backward). */
static double grads_kept(const struct build *bd)
{
	return whole_grads_until_reduced(bd) ? 1.0 / ((double)bd->shard * bd->cp) : 1.0;
}

/* What the reduction of `whole` bytes of whole gradients frees: all of them, or where the
 * micro-batch makes them (grads_made_in_backward) all but the shard that stays. */
static double grads_reduced_away(const struct build *bd, bool made, double whole)
{
	return made ? whole * (1.0 - grads_kept(bd)) : whole;
}

static int backward(struct build *bd, uint32_t g, uint64_t k, uint32_t ch, bool last)
{
	struct step_ctx *x = bd->x;
	const struct step_place *pl = &x->pl;
	struct step_machine *mc = &x->mc;
	struct stage *s = &bd->sg[g];
	int pool = mc->gpu_pool[g];
	double chunk_grads = 0, chunk_ex = 0; /* and of them the routed experts' */

	/* gradients made in backward appear block by block in the first micro-batch, while its
	 * activations go */
	bool make_grads = k == 0 && grads_made_in_backward(bd);
	uint32_t nb = make_grads ? s->nb : blocks(bd, s, last);
	/* --grad-sync last: the first micro-batch makes the whole gradients, the others add into
	 * them, and only the last reduces them, leaving the shard where backward made them */
	bool sync_last = grads_synced_last(bd), defer = sync_last && !last;
	bool made = make_grads || (sync_last && grads_made_in_backward(bd));
	bool fresh = !(sync_last && k > 0); /* this micro-batch allocates its gradients */
	/* At the step's last micro-batch the host takes each block's gradients: ZeRO-Infinity
	 * writes them to flash (DeepSpeed sums the micro-batches' in a host buffer and swaps them
	 * out at the accumulation boundary: stage3.py partition_grads,
	 * _offload_grad_partition_at_boundary), tiered's CPU optimizer steps them as they come. */
	bool host_grads = last && pl->grads == GRADS_HOST;
	bool overlap_update = host_grads && pl->update == UPD_CPU_OVERLAP;
	bool to_flash = host_grads && pl->update == UPD_CPU_AFTER && pl->grads_on_flash > 0 &&
			mc->nvme_wr >= 0;
	bool host_takes = to_flash || overlap_update;
	/* the last backward is left whole where the CPU optimizer steps each block's gradients
	 * as they come (tiered): when the host is the slower, backward waits for it, and the
	 * host's reads and writes share the drives in a pattern that does not repeat within a
	 * few blocks (405B tiered on 8 H100: the CPU steps start 2.6 to 4.6 s apart; on two
	 * GPUs with one drive a 17-block cycle after a 20-block ramp), so the engine would find
	 * the pass not periodic and the whole step would run again (tried on the 405B plan: with
	 * 60 blocks of ramp before the gap and periods up to 12 blocks, the engine refused the
	 * fold 149 times in its 129 tiered runs, at probes whose flows' remaining work and rates
	 * differed by 10 to 90 %, not by rounding; folding it at the usual edge, the plan took
	 * 0.16 s for 0.13 s on one core). Where ZeRO-Infinity only writes each block's gradients
	 * to flash the writes settle within the folded pass's edge (the 405B plan: 2.5 % fewer
	 * instructions), and the engine checks that they do. */
	struct fold_pass fp = {.b = -1};
	uint32_t gap = overlap_update ? 0 : fold_gap(bd, s, nb, &fp);
	bool hold = holds_checkpoints(bd);
	double held = 0; /* the checkpoints and input gradients held until the pass ends */
	for (uint32_t i = 0; i < nb; i++) {
		if (gap && i == fp.left)
			i += gap;
		uint32_t b = nb - 1 - i;
		uint32_t lb = block_layers(s->layers, nb, b);
		struct block_rc m;
		block_rc(bd, s, b, lb, nb, &m);
		double wb = block_weights(bd, s, b, lb, nb);
		double saved = block_saved(bd, s, b, lb, nb, &m);
		double gb = block_grads(bd, s, b, lb, nb);
		/* a block's weights come as the block before it in backward starts (FSDP's default
		 * BACKWARD_PRE: the pre-backward hook issues the next all-gather; DeepSpeed ZeRO-3
		 * prefetches by its recorded trace), or with --backward-prefetch post once that
		 * block's backward is done (BACKWARD_POST: the post-backward hook reshards and
		 * prefetches, torch/distributed/fsdp/_runtime_utils.py, _post_backward_hook) */
		bool turn = (i == 0 && bd->pp == 1 && bd->vp == 1) || x->c->bwd_prefetch_post;
		int f = fetch(bd, g, s, wb, turn ? FETCH_TURNAROUND : FETCH_AHEAD), ck = -1;
		/* the head's backward runs first and frees the logits before the block's layers
		 * are recomputed: they never coexist with the recompute's working set */
		bool runs_head = s->head && b == nb - 1;
		double head = runs_head ? bd->act_head : 0;
		double share = block_offloaded(bd, s, b, lb, nb);
		if (pl->ckpt != W_GPU && share > 0) {
			int rd = -1;
			double off = share * (saved - head); /* what forward moved off the GPU */
			if (pl->ckpt == W_FLASH && mc->nvme_rd >= 0) {
				/* read back into DRAM staging two blocks ahead of its backward */
				rd = flash_io(bd, "flash read checkpoint", mc->s_ckpt, off, true);
				if (rd < 0 || mem(bd, rd, mc->dram_pool, CAT_A, off, ENG_AT_START) ||
				    mem(bd, rd, mc->flash_pool, CAT_A, -off, ENG_AT_END) ||
				    dep(bd, ring_back(s->comp_ring, s->ncomp, 3), rd) ||
				    dep(bd, s->last_ckpt_down, rd))
					return -1;
			}
			/* DeepSpeed's cpu_checkpointing brings it back as the layer's backward
			 * starts (gather_partitioned_activations, .to(device) from pageable
			 * memory): synchronous, after the layer before it in backward, before
			 * the recompute */
			ck = pl->ckpt_sync ? host_copy_sync(bd, g, true, "h2d checkpoint", off)
					   : host_copy(bd, g, true, "h2d checkpoint", off);
			if (ck < 0 || mem(bd, ck, pool, CAT_A, off, ENG_AT_START) ||
			    mem(bd, ck, mc->dram_pool, CAT_A, -off, ENG_AT_END) || dep(bd, rd, ck))
				return -1;
			/* up one block ahead, while the block before it in backward computes, and
			 * never before it went down (the copies of a stage run in order, so the
			 * last one down covers this block's) */
			int lim = ring_back(s->comp_ring, s->ncomp, 2);
			TRY(dep(bd, lim, ck));
			if (rd < 0)
				TRY(dep(bd, s->last_ckpt_down, ck));
		}
		/* context parallelism: the backward passes keys and values round again and their
		 * gradients back; a recompute that runs attention again passes them once more
		 * (m.kv_again) */
		double flops = lb * (bd->F.layer_bwd_exec + m.recompute_exec) +
			       (runs_head ? bd->F.head_bwd : 0);
		/* backward: the gradient of each activation written and read, its saved value read
		 * again (2 x the forward's traffic), plus the recompute's forward traffic */
		double rc_mem = 2.0 * m.remat;
		/* quantised weights: dequantised again for the input gradient (nf4), and for a
		 * full recompute's forward (mdl_job_weight_passes) */
		rc_mem += m.weight_bwd;
		/* FP8: the output gradients' casts, and a full recompute's forward casts again */
		rc_mem += bd->fp8_bwd + m.fp8_again;
		/* eager norms and rotary: their backward, and their forward again where the
		 * recompute runs it (full, and per-op, which recomputes every non-matmul op) */
		rc_mem += bd->eager_bwd + m.eager_again;
		/* the token dispatcher's copies, and a recompute's forward ones again */
		rc_mem += bd->moe_pass + m.moe_again;
		/* the loss's backward, and a quantised head dequantised again for its input
		 * gradient */
		double head_bytes = runs_head ? bd->head_dequant + bd->loss_bwd : 0;
		/* the shared experts' backward, and a full or per-op recompute's forward of them
		 * again (in the share of the block's layers that recompute) */
		double rc_w =
			bd->rc.recompute_exec > 0 ? m.recompute_exec / bd->rc.recompute_exec : 0;
		double shared = bd->shared_bwd + (full_or_op(bd->x->job.recompute) ? rc_w : 0) *
							 bd->shared_fwd;
		int end, c = compute(bd, g, s, "backward", flops,
				     lb * (4.0 * bd->act_all + rc_mem) + head_bytes,
				     lb * m.fixed_bwd, lb * m.issue_bwd, (2.0 + m.rc_ar) * lb,
				     lb * (2.0 + m.kv_again), lb * shared, f, &end);
		if (c < 0 || dep(bd, ck, c))
			return -1;
		if (reduce_waits(bd))
			TRY(dep(bd, ring_back(s->rs_ring, s->nrs, 2), c));
		if (i == 0)
			bd->b_first[cell(bd, k, ch, g)] = c;
		fold_probe(&fp, i, c);
		/* what the graph holds past backward stays (graph_held) */
		double gheld = lb * m.held;
		if (head > 0) { /* the loss's gradients stand on the saved logits for a moment */
			TRY(mem(bd, c, pool, CAT_A, bd->act_head_bwd, ENG_AT_START));
			TRY(mem(bd, c, pool, CAT_A,
				-(head - bd->head_held - bd->head_logits + bd->act_head_bwd),
				ENG_AT_START));
		}
		if (!hold)
			TRY(mem(bd, c, pool, CAT_A, -(saved - head - gheld), ENG_AT_END));
		if (i == nb - 1 && x->c->graph_next_fwd) /* it goes once the next forward ran */
			s->graph_pending += graph_held(bd, s);
		else if (i == nb - 1) /* or as backward returns */
			TRY(mem(bd, c, pool, CAT_A, -graph_held(bd, s), ENG_AT_END));
		if (m.transient) {
			TRY(mem(bd, c, pool, CAT_A, m.work, ENG_AT_START));
			TRY(mem(bd, c, pool, CAT_A, -m.work, ENG_AT_END));
		}
		/* one layer's backward at a time makes its activations' gradients, and passes
		 * over its weights again one at a time (dequantises them, DoRA's norm in a
		 * recompute) */
		TRY(mem(bd, c, pool, CAT_A, bd->act_grad + bd->weight_live_bwd, ENG_AT_START));
		TRY(mem(bd, c, pool, CAT_A, -(bd->act_grad + bd->weight_live_bwd), ENG_AT_END));
		if (hold) { /* its checkpoint stays, its input's gradient (made last) beside it */
			TRY(mem(bd, c, pool, CAT_A, saved - head, ENG_AT_END));
			held += 2.0 * (saved - head) * (gap && i == fp.left + gap ? gap + 1.0 : 1.0);
			if (i == nb - 1) /* FSDP removes the hooks as backward ends */
				TRY(mem(bd, c, pool, CAT_A, -held, ENG_AT_END));
		}
		if (f >= 0)
			TRY(mem(bd, c, pool, CAT_W, -wb, ENG_AT_END));
		/* gradients. A tied embedding is one parameter used by the head, first in
		 * backward, and by the embedding, last: where gradients come and go per block its
		 * gradient stands from the one to the other (FSDP and ZeRO reduce it once, after
		 * the embedding's backward; the optimizer-in-backward hook fires once all of a
		 * tensor's gradients are accumulated: PyTorch docs,
		 * Tensor.register_post_accumulate_grad_hook) */
		double tie = x->w->arch.tied && s->embed && s->head ? bd->E.gradients_bytes / bd->tp
								     : 0;
		double up = gb + (i == 0 ? tie : 0) - (b == 0 ? tie : 0);
		bool zero_rs = x->c->layout.zero >= 1 || pl->shard_stream;
		if (pl->grads == GRADS_LOCAL) {
			bool unsharded = whole_grads_until_reduced(bd);
			/* FSDP's unit is a layer: where reduce_waits holds backward to two of them
			 * unreduced, a block of more layers (the simulation's grouping where weights
			 * stay put, not the framework's) never has all of its layers' whole
			 * gradients at once, only two layers' beside the shards they leave (not
			 * where they all stand from the first micro-batch on) */
			double layer_g = bd->L.gradients_bytes / bd->tp;
			double spare = unsharded && reduce_waits(bd) && lb > 2 && !sync_last
					       ? (lb - 2) * layer_g *
							 (make_grads ? 1.0 - grads_kept(bd) : 1.0)
					       : 0;
			/* on one GPU the layers' gradients appear as backward reaches each and stay:
			 * the block holds its first layer's (and the head's or embedding's) as it
			 * starts and its other layers' once done, after its activations have gone
			 * (effects apply in order), not all of them beside its activations */
			double later = make_grads && !unsharded && lb > 1 ? (lb - 1) * layer_g : 0;
			if ((unsharded || make_grads) && fresh)
				TRY(mem(bd, c, pool, CAT_G, up - spare - later, ENG_AT_START));
			if (later > 0)
				TRY(mem(bd, c, pool, CAT_G, later, ENG_AT_END));
			if (!x->c->no_grad_overlap && (x->c->layout.zero >= 2 || last) && !defer) {
				int rs = -1;
				int r = grads_reduce(bd, g, mc->s_comm[g], zero_rs, gb,
						     lb * bd->ex_grads / bd->tp, &rs);
				double gone = grads_reduced_away(bd, made, gb) - spare;
				if (r < 0 || dep(bd, end, rs) ||
				    (unsharded && mem(bd, rs, pool, CAT_G, -gone, ENG_AT_END)))
					return -1;
				s->last_bwd_comm = r;
				s->rs_ring[s->nrs++ % 16] = rs;
			}
			/* the blocks a fold leaves out have theirs too */
			double times = gap && i == fp.left + gap ? gap + 1.0 : 1.0;
			chunk_grads += gb * times;
			chunk_ex += lb * bd->ex_grads / bd->tp * times;
			if (x->c->opt_in_bwd) {
				/* the block's gradients exist only until its optimizer step, which
				 * runs on the compute stream as backward reaches it (a tied
				 * embedding's from the head's backward to the embedding's) */
				double shard = block_trainable(bd, s, b, lb, nb) /
					       (x->c->layout.zero >= 1 ? bd->shard : 1);
				double per = bd->L.optimizer_bytes /
					     fmax(1.0, (double)bd->L.trainable_params);
				int home, u = paged_update(bd, g, "adamw (in backward)", shard,
							   shard * per, s->last_bwd_comm, &home);
				if (u < 0 || dep(bd, end, u) ||
				    mem(bd, c, pool, CAT_G, up, ENG_AT_START) ||
				    mem(bd, u, pool, CAT_G, -gb, ENG_AT_END))
					return -1;
				s->last_bwd_comm = home;
			}
		} else if (defer) {
			/* FSDP's CPU offload under --grad-sync last: the first micro-batch makes the
			 * block's whole gradients, which stay on the GPU, neither reduced nor copied
			 * down, until the last micro-batch's backward */
			if (fresh)
				TRY(mem(bd, c, pool, CAT_G, gb, ENG_AT_START));
		} else {
			/* host gradients: a block buffer on the GPU, [reduce-scatter], copy down; at
			 * most the buckets' worth in flight, and at least two blocks (one filled by
			 * backward while the other goes down, as the double buffer does) */
			double down = gb;
			TRY(dep(bd, ring_back(s->d2h_ring, s->nd2h, grads_inflight(bd, gb)), c));
			if (fresh) /* under --grad-sync last the first micro-batch made them */
				TRY(mem(bd, c, pool, CAT_G, gb, ENG_AT_START));
			int r = -1;
			if (zero_rs && bd->dp > 1) {
				r = dp_coll(bd, g, mc->s_comm[g], "reduce-scatter grads", false, gb);
				if (r < 0 || dep(bd, end, r))
					return -1;
				down = gb / bd->dp;
			}
			/* at the boundary only the CPU's sub-groups go down in fp32; Twin-Flow's
			 * are cast into their fp32 buffer on the GPU (stage3.py,
			 * _offload_grad_partition_at_boundary), a pass of a few ms left out. The
			 * running sum still round-trips for every parameter: DeepSpeed keeps it in
			 * pinned DRAM whatever the ratio (grad_partitions_flat_buffer). The
			 * sub-groups on the GPU are the first parameters (the embedding and the
			 * first layers, whose backward is last); spreading the share over every
			 * block moves the same bytes */
			int d = grads_to_host(bd, g, k, last, end, r, down,
					      block_trainable(bd, s, b, lb, nb) / bd->dp *
						  (1 - pl->opt_gpu));
			if (d < 0 || mem(bd, d, pool, CAT_G, -gb, ENG_AT_END))
				return -1;
			s->d2h_ring[s->nd2h++ % 16] = d;
			s->last_bwd_comm = d;
			double params = block_trainable(bd, s, b, lb, nb) / bd->dp;
			/* The host takes each block's gradients as they land. They land in pinned
			 * DRAM buffers, the buckets' worth as on the way down: when the host is
			 * slower than backward, the copy of a block waits for the host to take the
			 * one that many blocks back, and backward for the copy, instead of the
			 * gradients piling up in DRAM without bound (DeepSpeed's reduce buckets,
			 * Fuyou's and Ratel's gradient offloading alike, published.md 9.4) */
			int took = -1;
			double hgb = params * step_host_grad_bytes(pl) * pl->grads_on_flash;
			if (host_takes &&
			    (dep(bd, ring_back(s->hg_ring, s->nhg, grads_inflight(bd, gb)), d) ||
			     mem(bd, d, mc->dram_pool, CAT_G, down, ENG_AT_START)))
				return -1;
			if (to_flash) {
				int w = flash_io(bd, "flash write grads", mc->s_cpu, hgb, false);
				if (w < 0 || dep(bd, d, w))
					return -1;
				s->last_bwd_comm = took = w;
			}
			if (overlap_update) {
				double opt = params * (bd->L.optimizer_bytes /
						       fmax(1.0, (double)bd->L.trainable_params));
				/* the sum of the micro-batches before it comes from flash; with one
				 * micro-batch there is none */
				double rd = opt * pl->opt_on_flash + (x->m > 1 ? hgb : 0);
				/* the state back, and where weights live on flash the ones the step
				 * changed: the trainable (LoRA's adapters, not the frozen base) */
				double wnew = params * mdl_job_weight_bytes(&x->job);
				double wr = opt * pl->opt_on_flash + wnew * pl->weights_on_flash;
				/* its state read while the block before it in backward computes */
				int u = host_update(bd, s, params, rd, wr, d,
						    ring_back(s->comp_ring, s->ncomp, 3), &took);
				if (u < 0)
					return -1;
				s->last_update = u;
			}
			if (host_takes) {
				TRY(mem(bd, took, mc->dram_pool, CAT_G, -down, ENG_AT_END));
				s->hg_ring[s->nhg++ % 16] = took;
			}
		}
		if (i == nb - 1)
			bd->b_last[cell(bd, k, ch, g)] = end;
	}
	if (gap && fold_register(bd, &fp, true))
		return -1;
	if (pl->grads == GRADS_LOCAL && x->c->no_grad_overlap &&
	    (x->c->layout.zero >= 2 || last) && !defer) {
		/* not overlapped: one reduction of the chunk's gradients after its backward, on
		 * the compute stream, which waits for it */
		bool zero_rs = x->c->layout.zero >= 1 || pl->shard_stream;
		int rs = -1;
		int r = grads_reduce(bd, g, mc->s_comp[g], zero_rs, chunk_grads, chunk_ex, &rs);
		double gone = grads_reduced_away(bd, made, chunk_grads);
		if (r < 0 || dep(bd, bd->b_last[cell(bd, k, ch, g)], rs) ||
		    (whole_grads_until_reduced(bd) && mem(bd, rs, pool, CAT_G, -gone, ENG_AT_END)))
			return -1;
		s->last_bwd_comm = r;
	}
	if (g > 0 || ch > 0) {
		int t = p2p_send(bd, g, "p2p send grads");
		if (t < 0 || dep(bd, bd->b_last[cell(bd, k, ch, g)], t))
			return -1;
		bd->b_send[cell(bd, k, ch, g)] = t;
	}
	if (next_forward_waits(bd))
		s->mb_reduced = s->last_bwd_comm;
	/* the micro-batch is done when its compute and what it queued on the other streams are:
	 * the steady period is measured between two of these (stage 0's, steady_marks()), so a
	 * collective or copy stream slower than the compute sets it (its backlog grows by the
	 * difference every micro-batch) */
	uint64_t k0, span;
	steady_marks(bd, &k0, &span);
	if (g == 0 && ch == 0 && (k == k0 || k == k0 + span)) {
		int d = task(bd, "micro-batch done", -1, 0, 0, 0, NULL, NULL);
		if (d < 0 || dep(bd, bd->b_last[cell(bd, k, ch, g)], d) ||
		    dep(bd, s->last_bwd_comm, d))
			return -1;
		bd->b_done[cell(bd, k, ch, g)] = d;
	}
	return 0;
}

/* DeepSpeed's ZeRO-3 without offload, across data-parallel ranks: its buffers apply. */
static bool ds_zero3(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	return x->c->deepspeed && x->pl.update == UPD_GPU && x->c->layout.zero == 3 && bd->dp > 1;
}

/*
 * The bytes of DeepSpeed's reduce buckets without offload, across data-parallel ranks, each of
 * reduce_bucket_size elements in the training dtype: ZeRO-3 keeps one for the run (stage3.py);
 * ZeRO-1/2's contiguous gradients (default true, deepspeed/runtime/zero/config.py) go through
 * one, and a second with overlap_comm ("double buffers to avoid data access conflict",
 * stage_1_and_2.py setup_buckets), from the step's first backward to its update, counted for the
 * whole step, which changes no peak but the first forward's [A: DeepSpeed source]. 0 elsewhere.
 */
static double ds_reduce_buckets(const struct build *bd)
{
	const struct step_ctx *x = bd->x;
	uint32_t zero = x->c->layout.zero;
	if (!x->c->deepspeed || x->pl.update != UPD_GPU || bd->dp < 2 || zero == 0)
		return 0;
	double n = zero == 3 ? 1 : x->c->no_grad_overlap ? 1 : 2;
	return n * step_reduce_bucket(x->c) * mdl_job_act_bytes(&x->job);
}

/*
 * DeepSpeedCPUAdam's tile: the elements it steps before handing their new weights on, 128 Mi
 * (csrc/includes/simd.h, TILE, DeepSpeed 0.3-0.8) [A: source].
 */
#define CPU_ADAM_TILE (128.0 * 1024 * 1024)
/* what crosses PCIe of each new weight in that path: the step writes it as fp32 into a pinned
 * double buffer and a GPU kernel reads that and stores fp16 (custom_cuda_kernel.cu,
 * launch_param_update: a float input) [A: source] */
#define CPU_ADAM_COPY_BYTES 4.0

/*
 * ZeRO-1/2's CPU step as DeepSpeed 0.3-0.8 ran it under fp16 (--weights-up in-step): the
 * optimizer hands DeepSpeedCPUAdam the GPU's fp16 partition (stage2.py / stage_1_and_2.py,
 * optimizer.step(fp16_param_groups=...), where the optimizer's dtype is torch.half; removed in
 * 0.9.0, DeepSpeed PR 3097), and the step, tile by tile, writes each tile's new weights into
 * one of two pinned buffers and launches a kernel on that buffer's stream to copy them up,
 * waiting before it reuses a buffer for the copy two tiles back (cpu_adam.h, Step_8: the
 * cudaStreamSynchronize at t / TILE >= 2; SynchronizeStreams at the end) [A: source]. So the
 * copy runs beside the next tile's step and only the last tile's follows it, where the later
 * versions copy the whole partition after the step. `share` parameters of this rank, `w` the
 * whole weights' bytes (all-gathered after the step where ranks share them), `after` the task
 * the step waits for; the tiles past UPDATE_TILES_MAX are merged (a longer last copy). 0 ok,
 * -1 error.
 */
static int update_in_step(struct build *bd, uint32_t g, double share, double w, int after)
{
	struct stage *s = &bd->sg[g];
	int n = (int)fmin(UPDATE_TILES_MAX, fmax(1, ceil(share / CPU_ADAM_TILE)));
	int copy[2] = {-1, -1};
	for (int i = 0; i < n; i++) {
		int u = host_update(bd, s, share / n, 0, 0, after, after, NULL);
		int c = host_copy(bd, g, true, "h2d weights (in step)",
				  CPU_ADAM_COPY_BYTES * share / n);
		if (u < 0 || c < 0 || dep(bd, u, c) || dep(bd, copy[i % 2], u))
			return -1;
		copy[i % 2] = c;
	}
	/* the step returns once both streams are done */
	int done = task(bd, "weights up", -1, 0, 0, 0, NULL, NULL);
	if (done < 0 || dep(bd, copy[0], done) || dep(bd, copy[1], done))
		return -1;
	s->last_update = done;
	if (bd->dp > 1) {
		int ag = dp_coll(bd, g, bd->x->mc.s_comm[g], "all-gather weights", false, w);
		if (ag < 0 || dep(bd, done, ag))
			return -1;
		s->last_update = ag;
	}
	return 0;
}

/* The update after the last micro-batch: on the GPU (HBM bound), or on the CPU in chunks. */
static int update(struct build *bd, uint32_t g)
{
	struct step_ctx *x = bd->x;
	const struct step_place *pl = &x->pl;
	struct step_machine *mc = &x->mc;
	struct stage *s = &bd->sg[g];
	const struct mdl_layout *l = &x->c->layout;
	struct mdl_states loc; /* what this GPU keeps of its experts */
	mdl_ep_local(&s->st, &s->ex, bd->ekeep, &loc);
	double w = loc.weights_bytes / bd->tp, o = s->st.optimizer_bytes / bd->tp;
	double params = (double)s->st.trainable_params / bd->tp;
	double local = (double)loc.trainable_params / bd->tp;

	if (pl->update == UPD_GPU && x->c->opt_in_bwd) {
		s->last_update = s->last_bwd_comm; /* stepped block by block in backward */
		return 0;
	}
	if (pl->update == UPD_GPU) {
		/* the distributed optimizer shards over the data- and context-parallel ranks */
		double shard = l->zero >= 1 ? params / (bd->shard * bd->cp) : local;
		int clip = -1;
		if (!x->c->no_clip_grad) {
			/* clip_grad_norm_: the norm reads the gradients this GPU steps, a scalar
			 * all-reduce over every rank combines the norms, the scaling reads and
			 * writes them (3 passes through HBM) */
			double gb = s->st.gradients_bytes / bd->tp /
				    (l->zero >= 1 ? bd->shard * bd->cp : 1);
			uint32_t n = bd->tp * bd->cp * bd->pp * bd->dp;
			uint32_t gpn = x->hw->gpus_per_node ? x->hw->gpus_per_node : 1;
			double wire, lat = 0;
			if (n > 1)
				coll_cost(true, 4, n, bd->net_bw, n > gpn ? ALPHA_INTER : ALPHA_INTRA,
					  &wire, &lat);
			float three = 3;
			clip = task(bd, "grad norm and clip", mc->s_comp[g], gb, lat, 1, &mc->hbm[g],
				    &three);
			if (clip < 0 || dep(bd, s->last_bwd_comm, clip))
				return -1;
		}
		double opt =
			s->st.optimizer_bytes / bd->tp / (l->zero >= 1 ? bd->shard * bd->cp : 1);
		int home, u = paged_update(bd, g, "adamw", shard, opt, s->last_bwd_comm, &home);
		if (u < 0 || dep(bd, clip, u))
			return -1;
		if (grads_made_in_backward(bd)) /* zero_grad(set_to_none=True) after the step */
			TRY(mem(bd, u, mc->gpu_pool[g], CAT_G,
				-s->st.gradients_bytes * grads_kept(bd), ENG_AT_END));
		if (ds_zero3(bd)) { /* one sub-group's gradients in fp32 while it steps */
			double sg = step_sub_group(x->c);
			double b = 4.0 * fmin(sg, shard);
			TRY(mem(bd, u, mc->gpu_pool[g], CAT_G, b, ENG_AT_START));
			TRY(mem(bd, u, mc->gpu_pool[g], CAT_G, -b, ENG_AT_END));
		}
		s->last_update = home;
		if ((l->zero == 1 || l->zero == 2) && dp_group(bd) > 1 &&
		    !deferred_gather(bd)) {
			double we = bd->ex_apart ? s->ex.weights_bytes * bd->ekeep / bd->tp : 0;
			int ag = weights_gather(bd, g, mc->s_comm[g], w, we);
			if (ag < 0 || dep(bd, u, ag) || dep(bd, home, ag))
				return -1;
			s->last_update = ag;
		}
		return 0;
	}
	if (pl->update == UPD_CPU_OVERLAP)
		return 0;
	/* after backward, tile by tile: NVMe -> CPU -> NVMe; Twin-Flow's share of the sub-groups
	 * on the GPU meanwhile */
	double cpu = 1 - pl->opt_gpu;
	double share = params / bd->dp * cpu;
	double opt = o / bd->dp * cpu;
	double sg = step_sub_group(x->c);
	int last = -1, n = (int)fmin(UPDATE_TILES_MAX, fmax(1, ceil(share / sg)));
	if (pl->opt_gpu > 0) {
		/* DeepSpeed steps its GPU sub-groups first, with torch.optim.AdamW (stage3.py's
		 * backup_optimizer), whose kernels are queued before the CPU steps the rest:
		 * PyTorch's multi-tensor path on CUDA tensors, its sqrt of the second moment a
		 * temporary the size of the sub-group it steps. They run beside the CPU's step
		 * unless the gradients are clipped: then each CPU sub-group's unscale multiplies
		 * by the clip coefficient, a CUDA scalar, which waits for the stream to reach it
		 * (stage3.py, unscale_and_clip_grads) */
		double gp = params / bd->dp * pl->opt_gpu;
		float sc = (float)(mdl_job_update_bytes(&x->job) * SIM_FOREACH_ADAM_PASSES);
		double tmp = mdl_job_state_bytes(&x->job) * fmin(sg, gp);
		last = task(bd, "adamw (twin-flow)", mc->s_comp[g], gp, 0, 1, &mc->hbm[g], &sc);
		if (last < 0 || dep(bd, s->last_bwd_comm, last) ||
		    mem(bd, last, mc->gpu_pool[g], CAT_O, tmp, ENG_AT_START) ||
		    mem(bd, last, mc->gpu_pool[g], CAT_O, -tmp, ENG_AT_END))
			return -1;
	}
	int on_gpu = last;
	int after = on_gpu >= 0 && !x->c->no_clip_grad ? on_gpu : s->last_bwd_comm;
	if (x->c->weights_in_step && pl->fetch == FETCH_RESIDENT && cpu > 0)
		return update_in_step(bd, g, share, w, after);
	/* the weights the step changed go back where they live: where that is flash (ZeRO-
	 * Infinity's offload_param nvme), each sub-group's compute-dtype copy of its new fp32
	 * weights is written to the drives after its step (stage3.py,
	 * _reassign_or_swap_out_partitioned_parameters -> _partitioned_params_swap_out ->
	 * swap_out_partitioned_params) [A: source] */
	double wnew = share * mdl_job_weight_bytes(&x->job) * pl->weights_on_flash;
	for (int c = 0; cpu > 0 && c < n; c++) {
		double rd = (opt * pl->opt_on_flash +
			     share * step_host_grad_bytes(pl) * pl->grads_on_flash) /
			    n;
		double wr = (opt * pl->opt_on_flash + wnew) / n;
		last = host_update(bd, s, share / n, rd, wr, after, s->last_bwd_comm, NULL);
		if (last < 0)
			return -1;
	}
	s->last_update = last;
	if (pl->fetch != FETCH_STREAM && cpu > 0) {
		/* the updated compute-dtype weights go back up: ZeRO-Offload all-gathers them to
		 * every rank, ZeRO-3 keeps its shard (Twin-Flow's sub-groups wrote theirs on the
		 * GPU) */
		int h = host_copy(bd, g, true, "h2d weights", w / bd->dp * cpu);
		if (h < 0 || dep(bd, last, h) || dep(bd, on_gpu, h))
			return -1;
		s->last_update = h;
		if (pl->fetch == FETCH_RESIDENT && bd->dp > 1) {
			int ag = dp_coll(bd, g, mc->s_comm[g], "all-gather weights", false, w);
			if (ag < 0 || dep(bd, h, ag))
				return -1;
			s->last_update = ag;
		}
	}
	return 0;
}

/*
 * DeepSpeed's own host buffers beside the offloaded states, bytes per rank for a partition of
 * `trainable` parameters whose gradients on the GPU take `gb` bytes each (the parameters'
 * dtype), into *weights and *grads: allocated when the optimizer is built and kept all run
 * [A: DeepSpeed source at edaa722, 2026-08]:
 * - ZeRO-1/2 with offload_optimizer (stage_1_and_2.py __init__): beside each fp32 master
 *   partition, a buffer of it in the parameters' dtype (param_buffer_of_bit16_for_cpu_offload_
 *   groups), into which the CPU's AdamW writes the updated weights before they go up; and with
 *   gradient accumulation, a buffer in the parameters' dtype for each of the partition's
 *   parameters (async_accumulate_grad_in_cpu_via_gpu: accumulated_grads_in_cpu), the running
 *   sum that each micro-batch brings up and takes down (grads_to_host). DeepSpeed issue 7693
 *   (Nov 2025) counts the first, the fp32 master and the fp32 gradients at 10 B a parameter
 *   after deepspeed.initialize, "confirmed empirically". The buffer came with 0.17 (#7309);
 *   0.9 to 0.15 copied the fp32 partition to the GPU's weights with a blocking copy_, which
 *   PyTorch converts on the CPU first (Copy.cu: "For blocking transfers conversions are
 *   performed on CPU"), so the same bytes were in DRAM at the step, for its length only.
 * - ZeRO-3 with offload_optimizer, on the CPU or NVMe (stage3.py): one flat buffer of every
 *   parameter's partition in gradient_accumulation_dtype, the model's dtype by default, on the
 *   optimizer's device, the CPU (grad_partitions_flat_buffer, since #1453, January 2022), the
 *   pinned buffer each micro-batch's gradients go down to (grads_to_host); the fp32 gradients
 *   the optimizer steps are its sub-groups' own (the host gradients: HOST_GRAD_BYTES).
 * - Both, where the parameters live on the GPU (ZeRO-1/2; ZeRO-3 without offload_param): the
 *   partition the CPU steps, cloned to the CPU in master_weights_and_grads_dtype
 *   (single_partition_of_fp32_groups; stage3.py _create_fp32_partitions, which shares the
 *   partition only where it is on the CPU already), a copy beside the GPU's weights even where
 *   no mixed precision keeps a master (fp32, whose ZeRO-Offload holds 15.5 B a parameter in
 *   DRAM after initialisation: 2.52 B parameters, 3.07 -> 42.12 GB in the StrongHold
 *   artifact's DeepSpeed 0.5.7 log, strongh2/sc22-ae results/log_zero-offload_l-48; the
 *   optimizer's bytes count it where mixed precision keeps one). --weights-up in-step
 *   (DeepSpeed before 0.9) stepped straight into the GPU's weights: no compute-dtype copy.
 * Counted at their size: DeepSpeed pins them only with offload_optimizer.pin_memory (false by
 * default since #7689 for ZeRO-1/2's master partition too).
 */
static void ds_host_buffers(const struct build *bd, double trainable, double gb, double *weights,
			    double *grads)
{
	const struct step_place *pl = &bd->x->pl;
	*weights = *grads = 0;
	switch (pl->grads_copy) {
	case COPY_DS_ZERO2:
		*weights = bd->x->c->weights_in_step ? 0 : trainable * gb;
		*grads = bd->x->m > 1 ? trainable * gb : 0;
		break;
	case COPY_DS_ZERO3:
		*grads = trainable * gb;
		break;
	case COPY_PLAIN:
		return;
	}
	/* the CPU steps a copy of its own where the parameters live on the GPU: mixed precision's
	 * master is that copy (the optimizer's bytes), a precision without one has it all the
	 * same, in the parameters' dtype */
	if (!mdl_job_mixed(&bd->x->job) && pl->fetch != FETCH_STREAM)
		*weights += trainable * gb;
}

/* Memory held for the whole step: the setup task allocates it at t = 0, the done task frees
 * it. */
static int resident(struct build *bd)
{
	struct step_ctx *x = bd->x;
	const struct step_place *pl = &x->pl;
	struct step_machine *mc = &x->mc;
	const struct mdl_layout *l = &x->c->layout;
	int t[2] = {bd->setup, bd->done};
	int when[2] = {ENG_AT_START, ENG_AT_END};

	for (int i = 0; i < 2; i++) {
		double sign = i == 0 ? 1 : -1;
		for (uint32_t g = 0; g < bd->pp; g++) {
			struct stage *s = &bd->sg[g];
			double w = s->st.weights_bytes / bd->tp, gr = s->st.gradients_bytes / bd->tp;
			double o = s->st.optimizer_bytes / bd->tp;
			int pool = mc->gpu_pool[g];
			if (pl->update == UPD_GPU) {
				/* ZeRO-3 keeps the weight shard; gathered layers come and go; expert
				 * parallelism keeps experts / ep of what ZeRO does not shard */
				mdl_ep_shard(l->zero, bd->shard * bd->cp, bd->ekeep, &s->st, &s->ex,
					     bd->tp, &w, &gr, &o);
				if (x->c->opt_in_bwd || grads_made_in_backward(bd))
					gr = 0; /* per block, in backward */
				TRY(mem(bd, t[i], pool, CAT_W, sign * w, when[i]));
				TRY(mem(bd, t[i], pool, CAT_G, sign * gr, when[i]));
				TRY(mem(bd, t[i], pool, CAT_O, sign * o * (1 - pl->opt_paged),
					when[i]));
				TRY(mem(bd, t[i], mc->dram_pool, CAT_O, sign * o * pl->opt_paged,
					when[i]));
				TRY(mem(bd, t[i], pool, CAT_G, sign * ds_reduce_buckets(bd),
					when[i]));
			} else if (pl->fetch == FETCH_RESIDENT) {
				TRY(mem(bd, t[i], pool, CAT_W, sign * w, when[i]));
			} else if (pl->fetch == FETCH_GATHER) { /* ZeRO-3's shard */
				TRY(mem(bd, t[i], pool, CAT_W, sign * w / bd->dp, when[i]));
			}
			/* Twin-Flow's sub-groups: their fp32 state and gradients */
			if (pl->opt_gpu > 0) {
				double tr = (double)s->st.trainable_params / bd->tp / bd->dp;
				TRY(mem(bd, t[i], pool, CAT_O, sign * pl->opt_gpu * o / bd->dp,
					when[i]));
				TRY(mem(bd, t[i], pool, CAT_G,
					sign * pl->opt_gpu * tr * step_host_grad_bytes(pl),
					when[i]));
			}
			TRY(mem(bd, t[i], pool, CAT_X,
				sign * (MDL_CUDA_CONTEXT_BYTES + CUBLAS_WORKSPACE), when[i]));
		}
		if (pl->update == UPD_GPU)
			continue;
		/* host tiers, per representative GPU (the pools stand for k GPUs) */
		struct mdl_states st;
		mdl_job_states(&x->w->arch, &x->job, &st);
		double dp = bd->dp;
		double hg = (double)st.trainable_params * step_host_grad_bytes(pl) / dp;
		double w = pl->fetch == FETCH_STREAM ? st.weights_bytes / dp : 0;
		double o = st.optimizer_bytes / dp;
		double wf = pl->weights_on_flash, of = pl->opt_on_flash, gf = pl->grads_on_flash;
		double cpu = 1 - pl->opt_gpu; /* what Twin-Flow leaves on the GPU (above) */
		double tr = (double)st.trainable_params;
		double dw, dg;
		ds_host_buffers(bd, tr / dp, st.gradients_bytes / fmax(1.0, tr), &dw, &dg);
		TRY(mem(bd, t[i], mc->dram_pool, CAT_X, sign * pl->dram_fixed / mc->k, when[i]));
		TRY(mem(bd, t[i], mc->dram_pool, CAT_W, sign * dw, when[i]));
		TRY(mem(bd, t[i], mc->dram_pool, CAT_G, sign * dg, when[i]));
		TRY(mem(bd, t[i], mc->dram_pool, CAT_W, sign * w * (1 - wf), when[i]));
		TRY(mem(bd, t[i], mc->dram_pool, CAT_O, sign * o * (1 - of) * cpu, when[i]));
		TRY(mem(bd, t[i], mc->dram_pool, CAT_G, sign * hg * (1 - gf) * cpu, when[i]));
		TRY(mem(bd, t[i], mc->flash_pool, CAT_W, sign * w * wf, when[i]));
		TRY(mem(bd, t[i], mc->flash_pool, CAT_O, sign * o * of, when[i]));
		TRY(mem(bd, t[i], mc->flash_pool, CAT_G, sign * hg * gf, when[i]));
	}
	return 0;
}

int step_build(struct step_ctx *x, char *err, size_t errlen)
{
	const struct mdl_arch *a = &x->w->arch;
	const struct mdl_layout *l = &x->c->layout;
	/* the stages the layout has only (an out-of-range pp is refused below) */
	size_t nsg = l->pp >= 1 && l->pp <= SIM_MAX_PP ? l->pp : 1;
	uint32_t vp = mdl_layout_vp(l);
	/* Micro-batches simulated: without PP three (first, steady, last; each micro-batch's
	 * gradient traffic is done before the next forward: next_forward_waits); with PP enough for
	 * 1F1B's warm-up, three steady pairs and the cool-down, pp + 3 (pp + 4 gave the same step
	 * on all 5,376 points of the 530B bench grid and every golden; pp + 2 makes BLOOM's uneven
	 * stages, a 250k-token vocabulary at each end, 1 % short of its whole 128-micro-batch run,
	 * where pp + 3 and pp + 4 are 0.1 % long); interleaved, three groups of pp (two give a
	 * wrong period, three match a whole step of 64 groups to the ns on the cases of
	 * tests/test_sim.c and the Table 5 layouts). The rest repeat the steady period: (m + pp -
	 * 1) stage times is linear in m (Narayanan et al. 2021); tests/test_sim.c holds repeated
	 * steps to whole ones (every_micro_batch). */
	uint64_t cap = vp > 1 ? 3ull * nsg : nsg > 1 ? nsg + 3ull : 3;
	/* Not where the period the marks measure was not steady (x->unsteady; sim.c,
	 * steady_period) */
	if (x->c->every_micro_batch || x->unsteady >= 0)
		cap = UINT64_MAX;
	x->built = x->m <= cap ? x->m : cap;
	/* the build and its six per-cell task ids (f_first, f_send, b_first, b_last, b_send,
	 * b_done) in the engine's scratch, the build zeroed: no allocation per configuration */
	size_t head = sizeof(struct build) + nsg * sizeof(struct stage);
	size_t cells = x->resident_only ? 0 : (size_t)x->built * vp * nsg;
	struct build *bd = eng_scratch(x->e, head + cells * 6 * sizeof(int));

	if (!bd) {
		snprintf(err, errlen, "simulator: out of memory");
		return -1;
	}
	memset(bd, 0, head);
	bd->x = x;
	bd->err = err;
	bd->errlen = errlen;
	bd->tp = l->tp;
	bd->pp = l->pp;
	bd->dp = l->dp;
	bd->shard = mdl_layout_shard(l);
	bd->vp = vp;
	if (bd->pp > SIM_MAX_PP || bd->pp == 0 || !mdl_layout_split_ok(a, l)) {
		snprintf(err, errlen,
			 "--pp %u x --interleave %u must divide the %llu layers, or the layers plus "
			 "the embedding and the loss, or with --first-stage-layers %u and "
			 "--last-stage-layers %u (0: an even share) the layers between (pp at most "
			 "%d)",
			 bd->pp, bd->vp, (unsigned long long)a->layers, l->first, l->last,
			 SIM_MAX_PP);
		return -1;
	}
	/* Megatron's interleaved schedule runs the micro-batches in groups of pp (schedules.py
	 * asserts num_microbatches % pipeline_parallel_size == 0); mdl_layout_check has already
	 * refused interleaving without pipeline stages */
	if (bd->vp > 1 && x->m % bd->pp) {
		snprintf(err, errlen,
			 "--interleave %u needs micro-batches per step (%llu) that are a multiple of "
			 "--pp %u: set --global-batch or --grad-accum",
			 bd->vp, (unsigned long long)x->m, bd->pp);
		return -1;
	}
	mdl_job_states_part(a, &x->job, 1, false, false, &bd->L);
	bd->tpp = tp_passes(a);
	bd->ep = mdl_layout_ep(l);
	bd->ep_overlap = sim_ep_overlap(x->c, l, x->job.recompute);
	bd->etp = mdl_layout_etp(l);
	bd->ekeep = mdl_layout_expert_keep(l);
	if (a->experts && bd->ekeep != 1) {
		/* a GPU holds experts / ep of each layer, split over etp: per-layer weights,
		 * gradients, optimizer state and parameters take that part; ZeRO shards what it
		 * shards over dp */
		struct mdl_states lx, whole = bd->L;
		mdl_job_expert_states(a, &x->job, 1, &lx);
		mdl_ep_local(&whole, &lx, bd->ekeep, &bd->L);
		bd->ex_apart = expert_dp_apart(l);
		bd->ex_grads = bd->ex_apart ? lx.gradients_bytes * bd->ekeep : 0;
		bd->ex_weights = bd->ex_apart ? lx.weights_bytes * bd->ekeep : 0;
	}
	if (bd->ep > 1) {
		double sent = a2a_bytes(a, &x->job, bd->tp, l->sp), in, out;
		step_ep_wire(a, x->hw, l, x->c->dispatcher != SIM_DISPATCH_ALLTOALL, &in, &out);
		bd->a2a_in = sent * in;
		bd->a2a_out = sent * out;
		double sms = x->hw->gpu.sm_count;
		double n = sim_dispatcher_sms(x->c);
		if (x->c->dispatcher != SIM_DISPATCH_ALLTOALL && sms > n)
			bd->a2a_sm = n / sms;
	}
	mdl_job_states_part(a, &x->job, 0, true, false, &bd->E);
	mdl_job_states_part(a, &x->job, 0, false, true, &bd->H);
	if (head_copy(bd)) /* the last stage's head is a copy of the embedding's matrix */
		bd->H = bd->E;
	step_layer_flops(a, &x->job, x->hw, step_gemm_efficiency(x->c, x->hw, x->job.precision),
			 l->tp, x->c->tp_comm_overlap, &bd->F);
	bd->act_saved = mdl_act_layer_saved(a, &x->job, bd->tp, l->sp);
	bool halves = x->pl.half_layers && x->job.recompute == MDL_RC_FULL;
	/* a layer's backward holds what its recompute rematerialises on top of what it kept
	 * (full recompute half by half: the larger half), and in every mode the gradients its
	 * MLP makes (act_grad) */
	bd->act_all = mdl_act_layer_moved(a, &x->job, bd->tp, l->sp, &bd->act_moved_saved);
	mdl_job_weight_passes(a, &x->job, &bd->weights);
	bd->weights.fwd /= bd->tp, bd->weights.bwd /= bd->tp;
	bd->head_dequant = mdl_job_head_dequant(a, &x->job, bd->tp);
	bd->weight_live = mdl_job_weight_live(a, &x->job, bd->tp, false);
	bd->weight_live_bwd = mdl_job_weight_live(a, &x->job, bd->tp, true);
	bd->loss_fwd = mdl_job_loss_traffic(a, &x->job, bd->tp, &bd->loss_bwd);
	bd->eager_fwd = eager_bytes(a, &x->job, bd->tp, l->sp, x->hw, &bd->eager_bwd);
	bd->moe_pass = step_moe_dispatch_bytes(a, &x->job, l);
	layer_issue(a, &x->job, x->hw, mdl_layout_ep(l), mdl_layout_cp(l), &bd->issue_fwd,
		    &bd->issue_bwd, &bd->fixed_fwd, &bd->fixed_bwd);
	bd->act_work = halves ? mdl_act_half_working(a, &x->job, bd->tp, l->sp)
			      : rematerialised(x->job.recompute,
					       mdl_act_layer_working(a, &x->job, bd->tp, l->sp),
					       bd->act_saved);
	/* not where a layer goes half at a time (the tiered policies: aiDAPTIV's middleware,
	 * modelled to the batch it documents fitting, 56 sequences of 8B a 20 GB card, which one
	 * PyTorch backward of the whole micro-batch's MLP could not hold: pol_tiered.c) */
	bd->act_grad = x->pl.half_layers ? 0 : mdl_act_layer_grads(a, &x->job, bd->tp);
	if (halves) /* the attention half runs forward twice: before the MLP's and its own */
		bd->F.layer_recompute_exec += bd->F.attn_half_fwd_exec;
	/* a checkpointed layer's forward runs without autograd: each half's tensors are freed
	 * before the next half runs, so it holds the larger half at most (torch.utils.checkpoint
	 * runs the forward under no_grad) */
	bd->act_fwd_work = x->job.recompute == MDL_RC_FULL
				   ? mdl_act_half_working(a, &x->job, bd->tp, l->sp)
				   : bd->act_work;
	bd->act_embed = mdl_act_embed(a, &x->job, bd->tp, l->sp);
	bd->act_head = mdl_act_head(a, &x->job, bd->tp, l->sp);
	bd->boundary = (double)mdl_job_act_bytes(&x->job) * (double)x->job.seq *
		       (double)x->job.micro_batch * (double)a->hidden;
	bd->cp = mdl_layout_cp(l);
	/* already a context-parallel rank's: the tokens' tensors split, a 4-bit head's copies not */
	bd->act_head_bwd = mdl_act_head_backward(a, &x->job, bd->tp, bd->cp);
	bd->head_live = mdl_job_head_dequant_live(a, &x->job, bd->tp);
	/* the TP collectives --tp-comm-overlap leaves exposed (step_ub_exposed) count as the matrix
	 * kernels' fixed seconds do: serial on the compute stream, the recompute's forward again */
	double ub_fwd, ub_bwd;
	step_ub_exposed(a, &x->job, x->hw, step_gemm_efficiency(x->c, x->hw, x->job.precision),
			bd->tp, bd->cp, x->c->tp_comm_overlap, &ub_fwd, &ub_bwd);
	bd->fixed_fwd += ub_fwd;
	bd->fixed_bwd += ub_bwd + (x->job.recompute == MDL_RC_FULL ? ub_fwd : 0);
	bool fp8_gather = x->c->fp8_all_gather && x->pl.fetch == FETCH_GATHER;
	bd->fp8_gathered = step_fp8_gathered_less(a, &x->job, fp8_gather);
	bool whole = x->c->policy->kind == SIM_GPU_ONLY && x->pl.fetch == FETCH_RESIDENT;
	fp8_layer_casts(a, &x->job, (double)x->job.seq * (double)x->job.micro_batch / bd->cp,
			bd->tp, bd->ekeep, fp8_gather, bd->dp, whole, &bd->fp8_fwd, &bd->fp8_bwd,
			&bd->fp8_first);
	if (bd->cp > 1) {
		/* a GPU holds 1/cp of each sequence's tokens (Megatron-Core's load-balanced causal
		 * chunks): its GEMMs, its share of the attention scores (its queries against all
		 * keys), its activations, the boundary it sends, the tokens it dispatches to the
		 * experts and its loss are 1/cp of the sequence's; the keys and values of the whole
		 * sequence go round the ring */
		double c = bd->cp;
		struct mdl_flops *f = &bd->F;
		f->layer_fwd /= c, f->layer_bwd /= c, f->layer_recompute /= c;
		f->head_fwd /= c, f->head_bwd /= c;
		f->layer_fwd_exec /= c, f->layer_bwd_exec /= c, f->layer_recompute_exec /= c;
		f->attn_half_fwd_exec /= c, f->attn_core_fwd_exec /= c, f->attn_core_bwd_exec /= c;
		bd->act_saved /= c, bd->act_all /= c, bd->act_work /= c, bd->act_fwd_work /= c;
		bd->act_grad /= c;
		bd->act_moved_saved /= c;
		bd->act_embed /= c, bd->act_head /= c, bd->boundary /= c;
		bd->a2a_in /= c, bd->a2a_out /= c;
		bd->eager_fwd /= c, bd->eager_bwd /= c, bd->moe_pass /= c;
		bd->loss_fwd /= c, bd->loss_bwd /= c;
		bd->kv = 2.0 * (double)mdl_job_act_bytes(&x->job) * (double)x->job.seq *
			 (double)x->job.micro_batch * (double)(a->kv_heads * a->head_dim) / bd->tp;
	}
	/* --shared-expert-overlap: the shared experts' matmuls, 2 FLOPs a weight a token of
	 * this GPU's forward, twice that backward where they train (the input gradient alone
	 * where they are frozen), at the GEMM rate (FP8's where the linears run in FP8) */
	bd->shared_overlap = sim_shared_overlap(x->c, a, l);
	if (bd->shared_overlap) {
		double p = 0, tokens = (double)x->job.seq * (double)x->job.micro_batch / bd->cp;
		for (int i = 0; i < a->nlayer; i++) {
			const struct mdl_tensor *t = &a->layer[i];
			if (t->matmul && !strncmp(t->name, "shared_experts.", 15))
				p += (double)t->rows * (double)t->cols * mdl_tensor_share(a, t);
		}
		bd->shared_fwd = 2.0 * tokens * p * fp8_linear_keep(&x->job, x->hw);
		bd->shared_bwd = (x->job.method == MDL_FULL ? 2.0 : 1.0) * bd->shared_fwd;
	}

	/* the job's recompute figures, and none's for the layers --recompute-layers leaves out
	 * (block_rc) */
	enum mdl_recompute jrc = x->job.recompute;
	bd->rc = (struct block_rc){bd->F.layer_recompute_exec,
				   bd->act_saved,
				   bd->act_moved_saved,
				   bd->act_work,
				   bd->act_fwd_work,
				   rematerialised(jrc, bd->act_all, bd->act_moved_saved),
				   bd->issue_bwd,
				   bd->fixed_bwd,
				   bd->weights.bwd,
				   jrc == MDL_RC_FULL ? bd->fp8_fwd : 0,
				   full_or_op(jrc) ? bd->eager_fwd : 0,
				   rc_collectives(a, &x->job, l->sp),
				   mdl_job_core_again(&x->job) ? 1 : 0,
				   full_or_op(jrc) ? bd->moe_pass : 0,
				   jrc != MDL_RC_NONE};
	bd->rc.held = mdl_act_layer_held(a, &x->job, bd->tp, l->sp) / bd->cp;
	bd->head_held = mdl_act_head_held(a, &x->job, bd->tp, l->sp) / bd->cp;
	bd->head_logits = x->c->graph_next_fwd ? mdl_act_head_logits(a, &x->job, bd->tp) / bd->cp
					       : 0;
	bd->partial = jrc == MDL_RC_FULL ? x->job.recompute_layers : 0;
	if (bd->partial) {
		struct mdl_job j = x->job;
		struct mdl_flops f;
		struct mdl_weight_passes dq;
		double moved, issue_fwd, fixed_fwd, c = bd->cp;
		j.recompute = MDL_RC_NONE;
		step_layer_flops(a, &j, x->hw, step_gemm_efficiency(x->c, x->hw, j.precision), l->tp,
				 x->c->tp_comm_overlap, &f);
		mdl_act_layer_moved(a, &j, bd->tp, l->sp, &moved);
		mdl_job_weight_passes(a, &j, &dq);
		bd->none = (struct block_rc){.recompute_exec = f.layer_recompute_exec / c,
					     .saved = mdl_act_layer_saved(a, &j, bd->tp, l->sp) / c,
					     .held = mdl_act_layer_held(a, &j, bd->tp, l->sp) / c,
					     .moved_saved = moved / c,
					     .weight_bwd = dq.bwd / bd->tp};
		layer_issue(a, &j, x->hw, mdl_layout_ep(l), mdl_layout_cp(l), &issue_fwd,
			    &bd->none.issue_bwd, &fixed_fwd, &bd->none.fixed_bwd);
		bd->none.fixed_bwd += ub_bwd;
	}

	if (machine(bd))
		return -1;
	bd->edge = fold_edge(bd);
	bd->hbm_bw = eng_resource_at(x->e, x->mc.hbm[0])->capacity;

	for (uint32_t g = 0; g < bd->pp; g++) {
		struct stage *s = &bd->sg[g];
		uint64_t per = mdl_layout_stage_layers(a, l, g);
		s->last_update = s->last_bwd_comm = s->last_ckpt_down = s->mb_reduced = -1;
		s->opt_step[0] = s->opt_step[1] = s->opt_write[0] = s->opt_write[1] = -1;
		s->graph_pending = 0;
		bool last = g == bd->pp - 1;
		mdl_job_states_part(a, &x->job, per, g == 0 || (last && head_copy(bd)), last,
				    &s->st);
		mdl_job_expert_states(a, &x->job, per, &s->ex);
	}

	x->mb_end[0] = x->mb_end[1] = x->mb_end[2] = -1;
	x->mb_span = 1;
	for (uint32_t g = 0; g < bd->pp; g++)
		x->bwd_end[g] = -1;
	if (x->resident_only) {
		bd->setup = task(bd, "setup", -1, 0, 0, 0, NULL, NULL);
		bd->done = task(bd, "step done", -1, 0, 0, 0, NULL, NULL);
		return bd->setup < 0 || bd->done < 0 || dep(bd, bd->setup, bd->done) || resident(bd)
			       ? -1
			       : 0;
	}
	bd->f_first = (int *)((char *)bd + head);
	bd->f_send = bd->f_first + cells;
	bd->b_first = bd->f_send + cells;
	bd->b_last = bd->b_first + cells;
	bd->b_send = bd->b_last + cells;
	bd->b_done = bd->b_send + cells;
	for (size_t i = 0; i < cells * 6; i++)
		bd->f_first[i] = -1;

	bd->setup = task(bd, "setup", -1, 0, 0, 0, NULL, NULL);
	if (bd->setup < 0)
		return -1;
	/* --graph-freed next-forward (one stage, graph_held): the step's first forward runs beside
	 * the previous step's last graph, as its last graph stays to the step's end */
	if (x->c->graph_next_fwd) {
		struct stage *s = &bd->sg[0];
		enter_chunk(bd, 0, 0);
		s->graph_pending = graph_held(bd, s);
		int last = task(bd, "the previous step's last graph", -1, 0, 0, 0, NULL, NULL);
		TRY(last);
		TRY(dep(bd, bd->setup, last));
		TRY(mem(bd, last, x->mc.gpu_pool[0], CAT_A, s->graph_pending, ENG_AT_START));
	}

	/* 1F1B per stage (Narayanan et al. 2021): pp-g-1 warm-up forwards, then one forward and
	 * one backward alternately, then the remaining backwards. Interleaved (Megatron's
	 * forward_backward_pipelining_with_interleaving) the units are chunks, taken in groups
	 * of pp micro-batches, chunk by chunk (backward: last chunk first), with 2 (pp-g-1) +
	 * (vp-1) pp warm-up forwards, or all of them when there are only pp micro-batches.
	 * Streams are per stage, so the stages are built one after another; cross-stage
	 * dependencies are added afterwards. */
	uint64_t M = x->built, units = M * bd->vp, group = (uint64_t)bd->pp * bd->vp;
	for (uint32_t g = 0; g < bd->pp; g++) {
		uint64_t warm = bd->vp == 1 ? bd->pp - g - 1
				: M == bd->pp ? units
					      : 2ull * (bd->pp - g - 1) + (uint64_t)(bd->vp - 1) * bd->pp;
		if (warm > units)
			warm = units;
		/* --ep-overlap pairs each forward of 1F1B's steady state with a backward
		 * (compute()): Megatron-Core runs one more warm-up forward before the pairs, and
		 * with one stage the step's first forward alone (schedules.py: "we schedule one
		 * extra micro-batch forward step before the 1f1b stages"; combined_1f1b.py)
		 * [A: source], so the first warm + 1 forwards and the last warm + 1 backwards run
		 * alone. The units keep 1F1B's order: a pair's forward and backward are built one
		 * after the other, the memory of the pair's layer by layer interleaving (one pass's
		 * activations made as the other's are freed) taken as the unpaired order's */
		uint64_t alone = warm + 1 < units ? warm + 1 : units;
		uint64_t nf = 0, nbk = 0;
		while (nbk < units) {
			bool fwd = nf < units && (nf < warm || nf - warm <= nbk);
			bd->ep_hidden = bd->ep_overlap && (fwd ? nf >= alone : nbk + alone < units);
			uint64_t i = fwd ? nf++ : nbk++;
			uint64_t k = bd->vp == 1 ? i : i / group * bd->pp + i % bd->pp;
			uint32_t c = (uint32_t)(i % group / bd->pp);
			if (!fwd)
				c = bd->vp - 1 - c;
			enter_chunk(bd, g, c);
			if (fwd ? forward(bd, g, k, c) : backward(bd, g, k, c, k == M - 1))
				return -1;
		}
		bd->ep_hidden = false;
		if (head_copy(bd) && (g == 0 || g == bd->pp - 1) && tied_allreduce(bd, g, M))
			return -1;
		x->bwd_end[g] = bd->sg[g].last_bwd_comm;
		if (update(bd, g))
			return -1;
	}
	/* each side of the tied matrix's all-reduce waits for the other stage's gradients */
	if (head_copy(bd) && (dep(bd, bd->tie_pre[1], bd->tie_ar[0]) ||
			      dep(bd, bd->tie_pre[0], bd->tie_ar[1])))
		return -1;
	for (uint64_t k = 0; k < M; k++)
		for (uint32_t c = 0; c < bd->vp; c++)
			for (uint32_t g = 0; g < bd->pp; g++) {
				size_t i = cell(bd, k, c, g);
				/* forward from the previous stage, or the last stage's previous chunk */
				int fin = g > 0	  ? bd->f_send[cell(bd, k, c, g - 1)]
					  : c > 0 ? bd->f_send[cell(bd, k, c - 1, bd->pp - 1)]
						  : -1;
				int bin = g + 1 < bd->pp ? bd->b_send[cell(bd, k, c, g + 1)]
					  : c + 1 < bd->vp ? bd->b_send[cell(bd, k, c + 1, 0)]
							   : -1;
				if (dep(bd, bd->setup, bd->f_first[i]) || dep(bd, fin, bd->f_first[i]) ||
				    dep(bd, bin, bd->b_first[i]))
					return -1;
			}
	bd->done = task(bd, "step done", -1, 0, 0, 0, NULL, NULL);
	if (bd->done < 0)
		return -1;
	for (uint32_t g = 0; g < bd->pp; g++) {
		struct stage *s = &bd->sg[g];
		if (dep(bd, s->last_update, bd->done) || dep(bd, s->last_bwd_comm, bd->done))
			return -1;
		if (s->graph_pending > 0) { /* the step's last graph, the next step's to free */
			int gone = task(bd, "last graph let go", -1, 0, 0, 0, NULL, NULL);
			if (gone < 0 || dep(bd, bd->b_last[cell(bd, M - 1, 0, g)], gone) ||
			    dep(bd, gone, bd->done) ||
			    mem(bd, gone, x->mc.gpu_pool[g], CAT_A, -s->graph_pending, ENG_AT_END))
				return -1;
		}
		for (uint32_t c = 0; c < bd->vp; c++)
			if (dep(bd, bd->b_last[cell(bd, M - 1, c, g)], bd->done))
				return -1;
	}
	if (resident(bd))
		return -1;
	if (M < x->m) {
		uint64_t k0, span;
		steady_marks(bd, &k0, &span);
		x->mb_span = span;
		x->mb_end[0] = bd->b_done[cell(bd, k0, 0, 0)];
		x->mb_end[1] = bd->b_done[cell(bd, k0 + span, 0, 0)];
	}
	return 0;
}

int step_ckpt_variant(struct step_ctx *x, int v)
{
	/* DeepSpeed's activation_checkpointing.cpu_checkpointing moves checkpoints: only full
	 * recompute keeps any, and FSDP's CPU offload has none of it (sim_fsdp_offload) */
	if (v == 1 && (x->job.recompute != MDL_RC_FULL || sim_fsdp_offload(x->c)))
		return 1;
	/* --cpu-checkpointing yes or no: that placement alone */
	if ((x->c->cpu_ckpt == SIM_CPU_CKPT_YES && v == 0) ||
	    (x->c->cpu_ckpt == SIM_CPU_CKPT_NO && v == 1))
		return 1;
	x->pl.ckpt = v ? W_DRAM : W_GPU;
	x->pl.ckpt_sync = v != 0;
	return 0;
}

int step_require_dp_only(const struct step_ctx *x, char *err, size_t errlen)
{
	const struct mdl_layout *l = &x->c->layout;

	if (l->tp == 1 && l->pp == 1)
		return 0;
	snprintf(err, errlen, "policy %s runs data parallel only: --tp and --pp must be 1 (got %u, %u)",
		 x->c->policy->name, l->tp, l->pp);
	return -1;
}
