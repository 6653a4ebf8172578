/* job — see job.h. */
#include "job.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "act.h"

/*
 * Block-wise quantisation constants.
 * NF4 (QLoRA, Dettmers et al. 2023, arXiv 2305.14314, sec. 3): 4-bit weights in blocks of 64;
 * double quantisation stores the fp32 block constants as 8-bit values in second-level blocks of
 * 256 with one fp32 constant each: 8/64 + 32/(64*256) = 0.127 bits per parameter; without it
 * (job.plain_nf4) each block keeps its fp32 constant, 32/64 = 0.5 bits per parameter.
 * 8-bit optimizers (Dettmers et al. 2022, arXiv 2110.02861, sec. 2.1): 8-bit states with one
 * fp32 absmax per block, blocks of 256 since bitsandbytes 0.44 (Sep 2024, "Change 8bit optimizer
 * blocksize 2048->256", Optimizer2State/Optimizer1State.init_state: blocks = ceil(n / 256)), as
 * torchao's AdamW8bit (block_size 256) keeps them too; 2048 before.
 */
#define NF4_BYTES (0.5 + (8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0)
#define NF4_PLAIN_BYTES (0.5 + 32.0 / 64.0 / 8.0)

/* Bytes a bitsandbytes 4-bit weight takes with its block constants. */
static double nf4_bytes(const struct mdl_job *j)
{
	return j->plain_nf4 ? NF4_PLAIN_BYTES : NF4_BYTES;
}
/*
 * GPTQ as auto-gptq packs it (qlinear_cuda_old.py, QuantLinear.__init__): qweight, 4 bits a
 * weight in int32 words; per group of input features (j->quant_group) and output feature a 4-bit
 * zero point (qzeros, int32 words) and an fp16 scale; g_idx, an int32 per input feature. Its
 * PyTorch dequantisation (forward, past 128 rows) moves per weight: the packed word read (0.5 B),
 * bitwise_right_shift's int32 written (4), .to(int8) 4 read and 1 written, bitwise_and 1 + 1,
 * the zero point's subtraction 1 + 1 and the scale's product 1 read and 2 written: 16.5 B. The
 * zero points take the same path (shift, cast, mask, + 1: 13.5 B each) and are read by the
 * subtraction (1), the scales by the product (2): 16.5 B per group and output feature. 9
 * kernels: 4 for the zero points, 5 for the weight. With act order (desc_act, qlinear_cuda.py)
 * the scales and zero points are first gathered to every weight by g_idx (scales[g_idx]: 2 B
 * written a weight, zeros[g_idx]: 1; their reads, once per group, as above), the subtraction
 * reads both operands per weight (1 + 1, 1 written) and the product too (2 + 1, 2 written):
 * 11.5 + 2 + 1 + 3 + 5 = 22.5 B a weight, 16.5 per group and feature, 13 kernels (g_idx cast to
 * int64 twice, two gathers) [B: counted from the source; the small broadcast operands read from
 * DRAM once]. Under torch.compile Inductor fuses the chain into one kernel: the packed words and
 * the constants read once, the fp16 weight written, 0.5 + 2 B a weight and 0.5 + 2 per group
 * and feature; backward's matmul still reads the weight the forward kept (the min-cut
 * partitioner keeps what a non-fusible backward op reads, act.c) [D: Inductor's pointwise
 * fusion].
 */
#define GPTQ_DEQUANT_BYTES 16.5
#define GPTQ_DEQUANT_BYTES_ACT_ORDER 22.5
#define GPTQ_GROUP_BYTES 16.5
#define GPTQ_KERNELS 9.0
#define GPTQ_KERNELS_ACT_ORDER 13.0
#define GPTQ_FUSED_BYTES (0.5 + 2.0)
/* What GPTQ's eager dequantisation holds at its most beside the fp16 weight it keeps: the
 * shift's int32 words (4 B a weight) while .to(int8) writes their int8 copy (1); with act
 * order the product's operands come to 4 B a weight less the kept output, so the cast stays
 * the most (qlinear_cuda_old.py and qlinear_cuda.py, forward) [B: counted from the source].
 * Compiled, the fused kernel writes the kept weight alone. */
#define GPTQ_LIVE_BYTES (4.0 + 1.0)
#define ADAM8_STATE_BYTES (1.0 + 4.0 / 256.0)
/*
 * torchao's NF4Tensor dequantised eagerly (torchao/dtypes/nf4tensor.py, get_original_weight,
 * reached through linear_nf4's weight.to(dtype)): of the packed bytes (half a byte a weight) it
 * shifts out the first nibbles (read 0.5, write 0.5 B a weight) and casts them to int64 (read
 * 0.5, write 4: an 8-byte index per two weights), masks out the second likewise (1 + 4.5),
 * looks both up in the 16-entry NF4 table (each reads its indices, 4, and writes half the
 * weights in the weight dtype, e/2), rebuilds the block constants from their int8 copies (a
 * division and the mean's addition over one value a block of 64: (1 + 3e) / 64), materialises
 * the constants repeated to every weight of each half (flatten of an expanded view, e/2 each),
 * multiplies each half by them (read e/2 + e/2, write e/2 each) and stacks the halves into the
 * weight (read e, write e): 19 + 7e + (1 + 3e) / 64 B a weight, 33.1 for bf16, in 13 kernels
 * (2 shifts and masks, 2 casts, 2 lookups, 2 for the constants, 2 copies, 2 products, the
 * stack). Alive at the stack: both int64 index tensors (8 B a weight), the looked-up halves,
 * the scaled halves and the stacked weight, e each: 8 + 3e [B: counted from the source; the
 * table and the per-block constants read from cache]. The final .to() is a no-op where the
 * NF4Tensor's dtype is the compute dtype (torchtune loads bf16 weights). Under torch.compile
 * the chain is one kernel: the 4-bit blocks read, the weight written, as bitsandbytes' kernel
 * does [D: Inductor's pointwise fusion].
 */
#define TORCHAO_NF4_BYTES(e) (19.0 + 7.0 * (e) + (1.0 + 3.0 * (e)) / 64.0)
#define TORCHAO_NF4_LIVE(e) (8.0 + 3.0 * (e))
#define TORCHAO_NF4_KERNELS 13.0

unsigned mdl_job_act_bytes(const struct mdl_job *j)
{
	return j->precision == MDL_FP32 ? 4 : 2;
}

enum mdl_upcast mdl_job_upcast(const struct mdl_job *j)
{
	return mdl_job_bnb(j) ? j->upcast : MDL_UPCAST_NONE;
}

unsigned mdl_job_stream_bytes(const struct mdl_arch *a, const struct mdl_job *j)
{
	enum mdl_upcast u = mdl_job_upcast(j);
	if (u == MDL_UPCAST_ALL || (u == MDL_UPCAST_NORMS && !a->norm_cast_back))
		return 4;
	return mdl_job_act_bytes(j);
}

/* Bytes of an unquantised frozen parameter of t's kind under the job's upcast: all of them, or
 * the norms' (vectors: the norm weights, and the biases, which Linear4bit casts to its fp32 input's
 * dtype on first use) in fp32; else the weight dtype. */
static double frozen_bytes(const struct mdl_job *j, const struct mdl_tensor *t)
{
	enum mdl_upcast u = mdl_job_upcast(j);
	if (u == MDL_UPCAST_ALL || (u == MDL_UPCAST_NORMS && t->cols == 1))
		return 4.0;
	return mdl_job_weight_bytes(j);
}

unsigned mdl_job_weight_bytes(const struct mdl_job *j)
{
	return j->precision == MDL_FP32 ? 4 : 2;
}

static bool is_adapted(const struct mdl_job *j, const struct mdl_tensor *t)
{
	return j->method != MDL_FULL && (t->target & j->lora_targets);
}

/* The group of a layer's linears one of Unsloth's fused LoRA functions runs (LoRA_QKV,
 * LoRA_W, LoRA_MLP) that target t belongs to. */
static unsigned lora_group(unsigned target)
{
	if (target & (MDL_T_Q | MDL_T_K | MDL_T_V))
		return MDL_T_Q | MDL_T_K | MDL_T_V;
	if (target & (MDL_T_GATE | MDL_T_UP | MDL_T_DOWN))
		return MDL_T_GATE | MDL_T_UP | MDL_T_DOWN;
	return target & MDL_T_O;
}

bool mdl_job_lora_fused(const struct mdl_arch *a, const struct mdl_job *j,
			const struct mdl_tensor *t)
{
	if (!j->fused_lora || !is_adapted(j, t) || t->copies > 1)
		return false;
	unsigned g = lora_group(t->target), have = 0;
	for (int i = 0; i < a->nlayer; i++)
		if (a->layer[i].copies == 1)
			have |= a->layer[i].target & g;
	return have == g && (j->lora_targets & g) == g;
}

/* LoRA adds A (in x r) and B (r x out) to each adapted linear (Hu et al. 2021, arXiv
 * 2106.09685), DoRA a magnitude per output feature as well (Liu et al. 2024, arXiv 2402.09353:
 * PEFT's lora_magnitude_vector, torchtune's magnitude). */
static uint64_t adapter_params(const struct mdl_job *j, const struct mdl_tensor *t)
{
	if (!is_adapted(j, t))
		return 0;
	return ((uint64_t)j->lora_rank * (t->rows + t->cols) + (j->dora ? t->cols : 0)) *
	       t->copies;
}

unsigned mdl_job_adapter_bytes(const struct mdl_job *j)
{
	unsigned w = mdl_job_weight_bytes(j);
	return j->method != MDL_FULL && j->lora_fp32 && w < 4 ? 4 : w;
}

unsigned mdl_job_lora_out_bytes(const struct mdl_job *j)
{
	return mdl_job_mixed(j) ? mdl_job_act_bytes(j) : mdl_job_adapter_bytes(j);
}

double mdl_job_state_bytes(const struct mdl_job *j)
{
	return j->precision == MDL_BF16 ? 2.0 : 4.0;
}

/*
 * Optimizer bytes per trainable parameter beyond weights and gradients.
 * Mixed precision keeps an fp32 master copy (4 B) and fp32 states: AdamW m and v = 8 B, total 12
 * (ZeRO paper, Rajbhandari et al. 2020, sec. 3.1: "K = 12"); of the master only 2 B where the
 * optimizer keeps the low halves beside bf16 weights (mdl_master). Pure bf16 keeps states in the
 * param dtype, as torch.optim.AdamW does: 2 x 2 B. SGD is modelled with momentum (one state; HF
 * "Model training anatomy": SGD-momentum 4 B/param); Lion keeps one momentum (Chen et al. 2023,
 * arXiv 2302.06675, Alg. 2). Adafactor keeps factored second moments (rows + cols per matrix, no
 * first moment with beta1 = None; Shazeer & Stern 2018, arXiv 1804.04235), fp32 in the HF
 * implementation; its per-tensor size is added by the caller. param_dtype: a parameter trained
 * in the dtype the base model was loaded in, without a master copy, its states alike
 * (torch.optim's zeros_like): PEFT's modules_to_save copies the frozen module as it is.
 */
static double optimizer_bytes_per_param(const struct mdl_job *j, bool param_dtype)
{
	bool mixed = mdl_job_mixed(j);
	double state = param_dtype ? mdl_job_weight_bytes(j) : mdl_job_state_bytes(j);
	double master = !mixed || param_dtype		 ? 0.0
			: j->master == MDL_MASTER_REMAINDER ? 2.0
							     : 4.0;

	switch (j->optimizer) {
	case MDL_ADAMW:
	case MDL_PAGED_ADAMW:
		return master + 2 * state;
	case MDL_ADAMW8BIT:
	case MDL_PAGED_ADAMW8BIT:
		return master + 2 * ADAM8_STATE_BYTES;
	case MDL_SGD:
	case MDL_LION:
		return master + state;
	case MDL_ADAFACTOR:
		return master;
	}
	return master;
}

/* Bytes per trained parameter of its weight (*w), gradient (*g, fp32 main grads where
 * job.grad_dtype says) and optimizer state with any master copy (*opt), and whether a master
 * is kept: the compute dtype's; for an adapter, fp32 adapters on a 16-bit base (job.lora_fp32)
 * as an fp32 run trains them, their own weights, gradients and states in fp32, no master. */
static void trained_bytes(const struct mdl_job *j, bool adapter, double *w, double *g,
			  double *opt, bool *master)
{
	*w = mdl_job_weight_bytes(j);
	*g = j->grad_dtype == MDL_GRAD_FP32 ? 4.0 : *w;
	*opt = optimizer_bytes_per_param(j, false);
	*master = mdl_job_mixed(j);
	if (adapter && mdl_job_adapter_bytes(j) > *w) {
		struct mdl_job f32 = *j;
		f32.precision = MDL_FP32;
		*w = *g = 4.0;
		*opt = optimizer_bytes_per_param(&f32, false);
		*master = false;
	}
}

double mdl_job_update_bytes(const struct mdl_job *j)
{
	double wb, gb, opt;
	bool master;
	trained_bytes(j, j->method != MDL_FULL, &wb, &gb, &opt, &master);
	double weights = master && j->master != MDL_MASTER_REMAINDER ? wb : 2.0 * wb;
	return 2.0 * opt + gb + weights;
}

static bool is_embed(const struct mdl_tensor *t)
{
	return strncmp(t->name, "embed", 5) == 0;
}

bool mdl_job_trains_whole(const struct mdl_job *j, const struct mdl_tensor *t)
{
	if (j->method == MDL_FULL)
		return true;
	if (strcmp(t->name, "embed_tokens") == 0)
		return j->lora_targets & MDL_T_EMBED;
	if (strcmp(t->name, "lm_head") == 0) /* a tied head is the embedding's weight */
		return j->lora_targets & (t->copies ? MDL_T_HEAD : MDL_T_EMBED);
	return false;
}

/* The groups of linear t's input features (j->quant_group each) times its output features: a
 * zero point and a scale each. */
static double gptq_groups(const struct mdl_job *j, const struct mdl_tensor *t)
{
	double g = j->quant_group ? ceil((double)t->rows / j->quant_group) : 1.0;
	return g * (double)t->cols;
}

/* Bytes of a quantised linear t's copies (mdl_job_quantised). */
static double quant_bytes(const struct mdl_job *j, const struct mdl_tensor *t)
{
	double e = (double)t->rows * (double)t->cols;
	if (j->quant == MDL_QUANT_GPTQ)
		return t->copies *
		       (0.5 * e + (0.5 + 2.0) * gptq_groups(j, t) + 4.0 * (double)t->rows);
	return t->copies * e * nf4_bytes(j);
}

/* Whether outer tensor t is the head job.quant_head stores quantised (inputs.c refuses it for
 * a tied head or one trained whole). */
static bool head_quantised(const struct mdl_job *j, const struct mdl_tensor *t)
{
	return j->quant_head && strcmp(t->name, "lm_head") == 0;
}

/* Adafactor's factored second moments: rows + cols per matrix, n per vector, fp32. */
static double factored(uint64_t rows, uint64_t cols)
{
	return 4.0 * (cols > 1 ? (double)(rows + cols) : (double)rows);
}

void mdl_job_states_part(const struct mdl_arch *a, const struct mdl_job *j, uint64_t nlayers,
			 bool embed, bool head, struct mdl_states *s)
{
	double wb = mdl_job_weight_bytes(j);
	bool ada = j->optimizer == MDL_ADAFACTOR;
	double layer_frozen = 0, layer_ada = 0, outer_ada = 0;
	/* sums over all decoder layers; a part of nlayers takes its share of the mean layer, exact
	 * for the whole model */
	uint64_t all_params = 0, all_train = 0, outer_params = 0;

	memset(s, 0, sizeof *s);
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		uint64_t holders = t->layers ? t->layers : a->layers;
		double share = mdl_tensor_share(a, t);
		uint64_t e = t->rows * t->cols * t->copies;
		all_params += e * holders;
		double frozen = mdl_job_quantised(j, t) ? quant_bytes(j, t)
							 : (double)e * frozen_bytes(j, t);
		layer_frozen += frozen * share;
		if (j->method == MDL_FULL) {
			if (ada)
				layer_ada += factored(t->rows, t->cols) * t->copies * share;
		} else if (is_adapted(j, t)) {
			all_train += adapter_params(j, t) * holders;
			if (ada) /* A: in x r, B: r x out, DoRA's magnitude: a vector */
				layer_ada += (factored(t->rows, j->lora_rank) +
					      factored(j->lora_rank, t->cols) +
					      (j->dora ? factored(t->cols, 1) : 0)) *
					     t->copies * share;
		}
	}
	uint64_t outer_train = 0; /* PEFT: the embedding and head trained whole (modules_to_save) */
	double outer_frozen = 0;
	for (int i = 0; i < a->nouter; i++) {
		const struct mdl_tensor *t = &a->outer[i];
		if (!t->copies || (is_embed(t) ? !embed : !head))
			continue;
		outer_params += t->rows * t->cols;
		bool whole = mdl_job_trains_whole(j, t);
		double e = (double)(t->rows * t->cols);
		outer_frozen += head_quantised(j, t) ? quant_bytes(j, t) : e * frozen_bytes(j, t);
		if (j->method != MDL_FULL && whole)
			outer_train += t->rows * t->cols;
		if (ada && whole)
			outer_ada += factored(t->rows, t->cols);
	}
	s->params = nlayers * all_params / a->layers + outer_params;
	if (j->method == MDL_FULL) {
		s->trainable_params = s->params;
		s->frozen_params = 0;
	} else {
		s->trainable_params = nlayers * all_train / a->layers + outer_train;
		s->frozen_params = s->params;
	}
	/* trainable: weights and gradients in the compute dtype (or fp32 main grads), plus
	 * optimizer state; fp32 adapters as trained_bytes says */
	double adapters = (double)(s->trainable_params - outer_train);
	double gb, aw, ag, aopt, unused;
	bool master;
	trained_bytes(j, false, &unused, &gb, &unused, &master);
	trained_bytes(j, true, &aw, &ag, &aopt, &master);
	s->weights_bytes = aw * adapters + wb * (double)outer_train;
	s->gradients_bytes = ag * adapters + gb * (double)outer_train;
	s->optimizer_bytes = aopt * adapters +
			     optimizer_bytes_per_param(j, true) * (double)outer_train +
			     (double)nlayers * layer_ada + outer_ada;
	if (j->method != MDL_FULL) /* the frozen base, embeddings and head (mdl_upcast) */
		s->weights_bytes += (double)nlayers * layer_frozen + outer_frozen;
}

/* What bitsandbytes' dequantisation of a weight writes (its quant_state's dtype: fp16 where
 * job.quant_fp16, else the compute dtype), and what casting that to the compute dtype writes
 * (none where it is already), bytes a weight. */
static double bnb_written(const struct mdl_job *j, double *cast)
{
	*cast = j->quant_fp16 && j->precision != MDL_FP16_MIXED ? mdl_job_weight_bytes(j) : 0;
	return j->quant_fp16 ? 2.0 : mdl_job_weight_bytes(j);
}

/* HBM bytes a weight bitsandbytes dequantises for one GEMM: its 4-bit block read, the
 * dequantised weight written, and a cast reading that and writing the compute dtype's. */
static double bnb_pass(const struct mdl_job *j)
{
	double cast, w = bnb_written(j, &cast);
	return nf4_bytes(j) + w + (cast > 0 ? w + cast : 0);
}

/* Bytes a weight's dequantised copies hold while its GEMM runs: both at the cast. */
static double bnb_live(const struct mdl_job *j)
{
	double cast, w = bnb_written(j, &cast);
	return w + cast;
}

/* Whether torchao's NF4 dequantises by its eager chain of ops (TORCHAO_NF4_BYTES). */
static bool torchao_eager(const struct mdl_job *j)
{
	return j->method == MDL_QLORA && j->quant == MDL_QUANT_NF4_TORCHAO && !j->compile;
}

/* Whether a recompute runs DoRA's norm again: a full one, or torchtitan's per-op one, which
 * recomputes every op whose output it does not keep (act.h, mdl_op_sac_recomputed). */
static bool dora_again(const struct mdl_job *j)
{
	return j->recompute == MDL_RC_FULL || j->recompute == MDL_RC_OP;
}

/* HBM bytes a weight's dequantisation moves, per weight: bitsandbytes' dequantise kernel reads
 * the NF4 blocks with their constants and writes the compute-dtype weight, which the GEMM then
 * reads as any bf16 weight (counted in its rate), as torchao's does compiled; GPTQ's ops as
 * GPTQ_DEQUANT_BYTES counts and torchao's eager ones as TORCHAO_NF4_BYTES, or fused under
 * torch.compile. */
static double dequant_per_weight(const struct mdl_job *j)
{
	bool gptq = mdl_job_gptq(j);
	return torchao_eager(j)	    ? TORCHAO_NF4_BYTES(mdl_job_weight_bytes(j))
	       : !gptq		    ? bnb_pass(j)
	       : j->compile	    ? GPTQ_FUSED_BYTES
	       : j->quant_desc_act ? GPTQ_DEQUANT_BYTES_ACT_ORDER
				    : GPTQ_DEQUANT_BYTES;
}

/*
 * DoRA's passes over an adapted linear's weight in each forward (job.dora), as PEFT computes
 * them (peft/tuners/lora/dora.py at 5d602fd: DoraLinearLayer.forward, get_lora_weight,
 * get_weight_norm; torchtune's DoRALinear.forward alike) [A: source], with a the adapters'
 * dtype, p what lora_B writes (the compute dtype under autocast, else a), w the base's, in x
 * out the weight, per copy:
 *   torch.eye(in) in a, written (in^2 a), which lora_A reads (in^2 a) to write in x r (p), and
 *   lora_B makes B A whole from that (reads it, writes in x out in p): "Don't use lora_B.weight @
 *   lora_A.weight because this causes errors with FSDP. Instead, calculate the same but using
 *   forward"; cast to x's dtype where p is not a (PEFT cast x to lora_A's dtype);
 *   the base weight, dequantised where it is 4-bit (the dequantisation's pass again), cast to
 *   a where its dtype is another (read w, written a);
 *   scaling x B A (read a, written a), W + that (read 2 a, written a), the norm of each
 *   output's row (read a); the magnitude over the norms: vectors.
 * Under torch.compile the cast, the scaling, the sum and the norm are one reduction reading W
 * and B A [D: Inductor's pointwise and reduction fusion]. Returns the bytes; *live what the
 * pass holds at its most, at the sum: the identity (lora_A's autograd node keeps it until B A
 * goes at the forward's end, though nothing backpropagates through the detached norm), x A,
 * B A, the weight's cast copy, the scaled product and the sum (one linear at a time).
 */
static double dora_weight_pass(const struct mdl_job *j, const struct mdl_tensor *t, double *live)
{
	double in = (double)t->rows, out = (double)t->cols, r = (double)j->lora_rank;
	double a = mdl_job_adapter_bytes(j), p = mdl_job_lora_out_bytes(j);
	bool quant = mdl_job_quantised(j, t);
	double cast, w = quant && mdl_job_bnb(j) ? bnb_written(j, &cast) : mdl_job_weight_bytes(j);
	double eye = in * in * a, ba = in * out;
	double bytes = 2.0 * eye + in * r * 2.0 * p + ba * p;
	if (quant)
		bytes += ba * dequant_per_weight(j);
	if (j->compile) { /* W and B A read once by the fused norm */
		*live = eye + in * r * p + ba * p;
		return bytes + ba * (w + p);
	}
	/* the weight held as a copy: dequantised, or cast to a (the dequantised one then goes) */
	bool held = quant || w != a;
	bytes += (p != a ? ba * (p + a) : 0) + (w != a ? ba * (w + a) : 0);
	bytes += ba * (2.0 * a + 3.0 * a + a); /* the scaling, the sum, the norm */
	*live = eye + in * r * p + ba * (a + (held ? a : 0) + 2.0 * a);
	return bytes;
}

/* Whether t is q, k or v of a fused q/k/v projection (job.fused_qkv), which PEFT adapts as one
 * linear: DoRA's one identity there (dora_passes, mdl_job_flops). */
static bool in_fused_qkv(const struct mdl_job *j, const struct mdl_tensor *t)
{
	return j->fused_qkv && t->copies == 1 && (t->target & (MDL_T_Q | MDL_T_K | MDL_T_V));
}

/* DoRA's passes over a layer's adapted weights (dora_weight_pass), and in *most what the
 * largest holds: each adapted linear, a fused q/k/v projection (job.fused_qkv) as the one linear
 * PEFT adapts there, its outputs side by side, with one identity. */
static double dora_passes(const struct mdl_arch *a, const struct mdl_job *j, double *most)
{
	struct mdl_tensor qkv = {.name = "qkv_proj", .matmul = true, .copies = 1, .active = 1};
	double bytes = 0, live;
	*most = 0;
	for (int i = 0; j->dora && i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!is_adapted(j, t))
			continue;
		if (in_fused_qkv(j, t)) {
			qkv.rows = t->rows;
			qkv.cols += t->cols;
			qkv.layers = t->layers;
			continue;
		}
		bytes += t->copies * mdl_tensor_share(a, t) * dora_weight_pass(j, t, &live);
		*most = fmax(*most, live);
	}
	if (qkv.cols) {
		bytes += mdl_tensor_share(a, &qkv) * dora_weight_pass(j, &qkv, &live);
		*most = fmax(*most, live);
	}
	return bytes;
}

void mdl_job_weight_passes(const struct mdl_arch *a, const struct mdl_job *j,
			   struct mdl_weight_passes *d)
{
	/* one pass over the layer's quantised weights, per weight and (GPTQ) per group and output
	 * feature (dequant_per_weight) */
	bool gptq = mdl_job_gptq(j);
	double per_w = dequant_per_weight(j);
	double per_g = !gptq ? 0 : j->compile ? GPTQ_FUSED_BYTES : GPTQ_GROUP_BYTES;
	double pass = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (mdl_job_quantised(j, t))
			pass += t->copies * mdl_tensor_share(a, t) *
				(per_w * (double)t->rows * (double)t->cols +
				 per_g * gptq_groups(j, t));
	}
	/* a full (or per-op) recompute runs the forward's dequantisation again inside backward;
	 * bitsandbytes dequantises once more for the input gradient (MatMul4Bit.backward), GPTQ's
	 * matmul reads the weight its forward kept. Selective recompute reruns no linear. */
	bool again = j->recompute == MDL_RC_FULL || (gptq && j->recompute == MDL_RC_OP);
	d->fwd = pass;
	d->bwd = pass * ((again ? 1.0 : 0.0) + (gptq ? 0.0 : 1.0));
	/* DoRA's norm in every forward, and in a full or per-op recompute's forward again */
	double live, dora = dora_passes(a, j, &live);
	d->fwd += dora;
	d->bwd += dora_again(j) ? dora : 0;
	/* an fp32 stream (mdl_upcast) through a 4-bit linear: Linear4bit casts its input to the
	 * compute dtype and its output back (read 4, write 2; read 2, write 4); backward casts the
	 * two gradients the other way; per token, each linear its own copies (an adapter's own
	 * cast of its input is the adapter path's: act.c, adapter_traffic) */
	double s = mdl_job_stream_bytes(a, j), e = mdl_job_act_bytes(j);
	if (s <= e)
		return;
	double cast = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!mdl_job_quantised(j, t))
			continue;
		double in = (double)t->rows, out = (double)t->cols;
		cast += t->active * mdl_tensor_share(a, t) * (s + e) * (in + out);
	}
	cast *= (double)j->seq * (double)j->micro_batch;
	d->fwd += cast;
	d->bwd += cast * (again ? 2.0 : 1.0);
}

double mdl_job_weight_live(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool backward)
{
	/* one linear at a time (a routed expert's matrix is one expert's), each freed once its
	 * GEMM has read it: bitsandbytes' and compiled torchao's dequantised weight (and its
	 * cast), what torchao's eager chain holds at its stack, or GPTQ's temporaries beside the
	 * weight it keeps; DoRA's norm after the base's GEMM, in forward and a recompute's */
	bool dq = j->method == MDL_QLORA && !(mdl_job_gptq(j) && j->compile);
	bool dora = j->dora && (!backward || dora_again(j));
	double per = mdl_job_gptq(j)   ? GPTQ_LIVE_BYTES
		     : torchao_eager(j) ? TORCHAO_NF4_LIVE(mdl_job_weight_bytes(j))
					: bnb_live(j);
	double most = 0, live = 0;
	for (int i = 0; dq && i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (mdl_job_quantised(j, t))
			most = fmax(most, (double)t->rows * (double)t->cols * per);
	}
	if (dora)
		dora_passes(a, j, &live);
	return fmax(most, live) / (tp ? (double)tp : 1.0);
}

double mdl_job_dequant_kept(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			    bool attn)
{
	if (!mdl_job_gptq(j))
		return 0;
	double b = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (mdl_job_quantised(j, t) && mdl_tensor_attn(t) == attn)
			b += (double)t->rows * (double)t->cols * t->copies * mdl_tensor_share(a, t);
	}
	return b * mdl_job_weight_bytes(j) / (tp ? (double)tp : 1.0);
}

/* The head's elements on one GPU of a TP group where job.quant_head quantises it, else 0. */
static double quant_head_elements(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp)
{
	if (!j->quant_head)
		return 0;
	return (double)a->vocab * (double)a->hidden / (tp ? (double)tp : 1.0);
}

double mdl_job_head_dequant_live(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp)
{
	return bnb_live(j) * quant_head_elements(a, j, tp);
}

double mdl_job_head_dequant(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp)
{
	double passes = j->loss == MDL_LOSS_CHUNKED_OUTPUT ? MDL_OUTPUT_CHUNKS : 1.0;
	return passes * bnb_pass(j) * quant_head_elements(a, j, tp);
}

/*
 * What the cross-entropy's kernels take over the passes they make, measured: Liger-Kernel's
 * benchmarks on an A100-SXM4-80GB (linkedin/Liger-Kernel benchmark/data/all_benchmark_data.csv,
 * liger 0.2.1: 16,384 rows of fp32 logits, vocabularies of 32,768 to 131,072, median times)
 * at the rate memory-bound kernels get (0.88 x 2,039 GB/s): torch.nn.CrossEntropyLoss's forward
 * (its log-softmax reads the logits twice, for the maximum and the sum, and writes the
 * log-probabilities: 12 B an element) took 1.44-1.48 times that, its backward (nll's dense
 * gradient filled, log-softmax's backward reading it and the log-probabilities and writing the
 * input's gradient: 16 B) 2.07-2.12 times; Liger's one Triton kernel, which reads a row twice
 * (online softmax, then the gradient) and writes the gradient in place (12 B), 1.50-1.76 times,
 * as a fused kernel of flash-attn's or torch.compile's takes its passes [B: measured, one GPU;
 * other GPUs the same multiples of their own rate, C].
 */
#define CE_TORCH_FWD 1.45
#define CE_TORCH_BWD 2.1
#define CE_FUSED 1.65

/*
 * The loss's passes over the logits, per element of the head's output (a vocab-parallel head's
 * share), with e the compute dtype's bytes and the casts to fp32 and back (e + 4 each, where e
 * is under 4) [D: counted from the source]:
 *  - full, eager: transformers' ForCausalLMLoss (logits.float(), then cross_entropy), as
 *    torchtune's unchunked loss and Megatron's logits.float(): the cast, the log-softmax (12 B
 *    at CE_TORCH_FWD); backward 16 B at CE_TORCH_BWD and the cast back;
 *  - chunked-output, eager: torchtune's CEWithChunkedOutputLoss does the same a chunk at a
 *    time;
 *  - compiled (full or chunked-output): torch.compile fuses the loss into a kernel each way
 *    (two reads forward, a read and a write backward, at CE_FUSED); unchunked, torchtune's
 *    model hands it fp32 logits (TransformerDecoder.unembed's .float(), outside the compiled
 *    layers), so the casts stay; chunked, each chunk is cast inside;
 *  - fused: flash-attn's kernel reads the logits once forward (each row's log-sum-exp) and
 *    once more backward, writing the gradient (flash_attn/ops/triton/cross_entropy.py), in
 *    the compute dtype, at CE_FUSED;
 *  - fused-fp32: fms-acceleration's FastForCausalLMLoss (plugins/fused-ops-and-kernels,
 *    kernels/unsloth/cross_entropy_loss.py): the cast, the shifted logits copied (a read and
 *    a write of 4 B), Unsloth's kernel reading the copy once forward and reading and
 *    overwriting it with the gradient backward, at CE_FUSED; the shift's backward fills a
 *    zero gradient of the logits' shape and copies the kernel's in (12 B), and the cast back;
 *  - chunked: Liger's fused linear cross-entropy runs its kernel on each chunk's logits in the
 *    forward (two reads and the gradient written in place), nothing of it in backward;
 *  - vocab-parallel: Megatron-Core's VocabParallelCrossEntropy as PyTorch ops
 *    (megatron/core/tensor_parallel/cross_entropy.py): the cast to fp32, the row maximum (a
 *    read), the maximum subtracted and exponentiated in place (a read and a write each), the
 *    row sum (a read) and the division in place (a read and a write), the softmax kept;
 *    backward multiplies it by the loss's gradient in place and autograd casts it back to the
 *    logits' dtype. Its two reductions are PyTorch's row reductions, at the multiple its
 *    log-softmax kernel was measured at (CE_TORCH_FWD), the pointwise passes at the HBM rate;
 *  - vocab-parallel-fused: the same under cross_entropy_loss_fusion
 *    (megatron/core/fusions/fused_cross_entropy.py, each step a torch.compile'd function,
 *    megatron/core/jit.py): the cast with the maximum in one reduction kernel, the subtraction,
 *    exponent and sum in another (a read and the write back of the tensor it mutates; an fp32
 *    model's first reads its logits without a copy), both at CE_FUSED, the division in place;
 *    backward one pointwise kernel reading the softmax, writing it back and writing the
 *    compute-dtype gradient;
 *  - vocab-parallel-te: Transformer Engine's parallel_cross_entropy (transformer_engine/
 *    pytorch/triton/cross_entropy.py, common/triton/cross_entropy.py, TE 2.18): one Triton
 *    kernel reads each row for its maximum and sum (online softmax), a second reads it again
 *    and writes its fp32 gradient, both at CE_FUSED; backward scales that gradient in place by
 *    the per-token loss gradient (element_mul_kernel: a read and a write) and autograd casts it
 *    to the logits' dtype;
 *  - vocab-parallel-te-legacy: the same kernels from TE 2.2 to 2.17, whose second wrote the
 *    gradient over the logits in their own dtype, scaled in place in backward.
 */
double mdl_job_loss_traffic(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			    double *bwd)
{
	double n = (double)j->seq * (double)j->micro_batch * (double)a->vocab /
		   (tp ? (double)tp : 1.0);
	double e = mdl_job_act_bytes(j), cast = e < 4.0 ? e + 4.0 : 0.0;

	switch (j->loss) {
	case MDL_LOSS_CHUNKED:
		*bwd = 0;
		return 3.0 * e * CE_FUSED * n;
	case MDL_LOSS_FUSED:
		*bwd = 2.0 * e * CE_FUSED * n;
		return e * CE_FUSED * n;
	case MDL_LOSS_FUSED_FP32:
		*bwd = (8.0 * CE_FUSED + 12.0 + cast) * n;
		return (cast + 8.0 + 4.0 * CE_FUSED) * n;
	case MDL_LOSS_VOCAB_PARALLEL:
		*bwd = (8.0 + cast) * n;
		return (cast + 24.0 + 8.0 * CE_TORCH_FWD) * n;
	case MDL_LOSS_VOCAB_PARALLEL_FUSED:
		*bwd = (8.0 + e) * n;
		return ((fmax(cast, 4.0) + 8.0) * CE_FUSED + 8.0) * n;
	case MDL_LOSS_VOCAB_PARALLEL_TE:
		*bwd = (8.0 + cast) * n;
		return (2.0 * e + 4.0) * CE_FUSED * n;
	case MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY:
		*bwd = 2.0 * e * n;
		return 3.0 * e * CE_FUSED * n;
	case MDL_LOSS_FULL:
	case MDL_LOSS_CHUNKED_OUTPUT:
		break;
	}
	if (j->compile) { /* two passes of what the fused kernel reads each way */
		bool whole = j->loss == MDL_LOSS_FULL;
		*bwd = ((whole ? cast : 0.0) + 2.0 * (whole ? 4.0 : e) * CE_FUSED) * n;
		return *bwd;
	}
	*bwd = (cast + 16.0 * CE_TORCH_BWD) * n;
	return (cast + 12.0 * CE_TORCH_FWD) * n;
}

/* DoRA's kernels beyond LoRA's per adapted linear and forward, counted from PEFT's
 * DoraLinearLayer.forward (peft/tuners/lora/dora.py at 5d602fd) [B: counted from the source]:
 * its norm, torch.eye's two (the zero fill and the diagonal), lora_A and lora_B over it, the
 * scaling, the sum with W and the row norm (7; a cast each where B A or W is not in the
 * adapters' dtype); its output, the magnitude over the norm, minus one, the products with the
 * base output and with the adapters', their sum (5), each with its gradients in backward.
 * Compiled: the identity, the two GEMMs and one fused norm; one fused kernel for the output
 * [D: Inductor's pointwise and reduction fusion]. */
#define DORA_NORM_KERNELS 7.0
#define DORA_NORM_KERNELS_COMPILED 4.0
#define DORA_OUTPUT_KERNELS 5.0
/* An adapted linear inside Unsloth's fused LoRA functions (job.fused_lora): matmul_lora's X A
 * and its addmm_ of (X A) B into X W (unsloth/kernels/utils.py, matmul_lora) [B: counted from
 * the source], where PEFT launches A, B, the scaling and the sum. */
#define LORA_FUSED_KERNELS 2.0

/* The parameters of a mean layer's matmuls that --recompute selective's modules (m, MDL_RM_*)
 * run again, and in *gemms how many matrix kernels that is: MLA's up-projections (q_b_proj where
 * the queries come from a latent, kv_b_proj) under mla_up_proj, the dense layers' MLP (its gate,
 * up and down projections, at their share of the layers) under mlp; layernorm and moe_act make
 * memory-bound outputs again (act.c, rc_dropped), no matmul. */
static double rc_module_params(const struct mdl_arch *a, unsigned m, double *gemms)
{
	double p = 0, g = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!t->matmul || t->copies != 1)
			continue;
		bool up = (m & MDL_RM_MLA_UP) && a->kv_lora_rank &&
			  (!strcmp(t->name, "q_b_proj") || !strcmp(t->name, "kv_b_proj"));
		bool mlp = (m & MDL_RM_MLP) && (!strcmp(t->name, "gate_proj") ||
						 !strcmp(t->name, "up_proj") ||
						 !strcmp(t->name, "down_proj"));
		if (!up && !mlp)
			continue;
		p += (double)t->rows * (double)t->cols * mdl_tensor_share(a, t);
		g += mdl_tensor_share(a, t);
	}
	if (gemms)
		*gemms = g;
	return p;
}

/*
 * Kernel launches, counted from the Hugging Face decoder layer as eager PyTorch runs it
 * (transformers models/llama/modeling_llama.py; PEFT tuners/lora/layer.py; bitsandbytes
 * MatMul4Bit) [B: counted from the source]:
 *  - a linear: one GEMM (addmm when it has a bias); each expert's linears are launched for the
 *    tokens routed to it (MixtralSparseMoeBlock loops over the experts), plus the router's
 *    softmax, top-k, normalisation and one-hot (4) and each expert's index, scale and
 *    index_add (3); with grouped experts (j->grouped_experts) each projection of all the
 *    experts is one grouped GEMM, and the tokens are permuted to the experts, scaled by their
 *    routing weights and unpermuted once a layer (3: Megatron-Core's GroupedMLP/TEGroupedMLP
 *    with moe_permute and moe_unpermute, torchtitan's GroupedExperts on torch._grouped_mm)
 *    [B: counted from the source];
 *  - LlamaRMSNorm run eagerly (job.eager_ops): to(fp32), pow, mean, add eps, rsqrt, mul,
 *    to(dtype), mul weight = 8; fused (apex's and Transformer Engine's RMSNorm, Liger's) and
 *    LayerNorm one kernel; a q/k norm is two more of the layer's norm;
 *  - rotary, eager: q*cos, neg, cat, *sin, add, for q and for k = 10; fused, a kernel each for
 *    q and k = 2 (Megatron-Core's apply_rotary_pos_emb calls Transformer Engine's fused RoPE
 *    once per tensor) [B]; learned positions and ALiBi (inside the attention kernel): none;
 *  - attention core: SDPA/flash one kernel, repeat_kv's two copies under GQA, the output's
 *    transpose-contiguous one; eager: QK^T, mask add, fp32 upcast, softmax, downcast, dropout
 *    when attention dropout is set, AV, contiguous = 7 or 8;
 *  - MLP activation (and the gate's product): 1 or 2; the two residual adds, and their dropouts
 *    when set;
 *  - LoRA: A, B, the scaling and the add per adapted linear, and lora_dropout when set; DoRA
 *    the kernels DORA_NORM_KERNELS and DORA_OUTPUT_KERNELS count;
 *    QLoRA: one dequantise per quantised linear in forward, one more in backward (nf4), and
 *    a cast after each where the base was quantised from fp16 (job.quant_fp16); GPTQ's
 *    9 kernels in forward alone, 13 with act order, one compiled (GPTQ_KERNELS); torchao's
 *    eager NF4 13 each way (TORCHAO_NF4_KERNELS).
 * torch.compile fuses everything but the GEMMs and attention into about one kernel per
 * norm-to-GEMM region: the linears, the core, and a fused kernel per norm, for the rotary pair,
 * for the activation, and per LoRA for its scaling and add after its two GEMMs [D: Inductor's
 * pointwise/reduction fusion]. Backward: autograd records one node per differentiable forward op
 * and each launches about two kernels (a linear: input and weight gradient; a pointwise op: its
 * gradient and the accumulation) [D: estimate], less the weight gradients of frozen linears.
 * Matrix kernels: a linear's GEMM in forward, its input and weight gradients in backward (a
 * frozen one the input gradient only), LoRA's A and B likewise; the attention core's one fused
 * kernel each way (flash: FlashAttention-2's forward and backward kernels), or eager's QK^T and
 * AV, and their four gradients [B: counted from the source]. Per-op recompute runs again the
 * matmuls whose outputs it did not keep (mdl_op_sac_recomputed), selective the attention core.
 */
void mdl_job_launches(const struct mdl_arch *a, const struct mdl_job *j, uint32_t ep,
		      struct mdl_launches *k)
{
	/* a rank loops over its own experts: 1/ep of them under expert parallelism (Megatron-Core's
	 * SequentialMLP over its local experts) */
	double local = ep > 1 ? 1.0 / ep : 1.0;
	double linears = 0, frozen = 0, adapted = 0, quantised = 0, experts = 0, op_again = 0;
	double adapted_q = 0; /* adapted and quantised: DoRA dequantises them again */
	double unsloth = 0; /* adapted inside Unsloth's fused LoRA functions */
	bool unsloth_mlp = false;
	int nmm = 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!t->matmul || t->cols <= 1)
			continue;
		/* a projection's experts: a launch each, or one grouped GEMM */
		bool grouped = t->copies > 1 && j->grouped_experts;
		double n = (grouped ? 1.0 : t->copies > 1 ? t->copies * local : 1.0) *
			   mdl_tensor_share(a, t);
		if (mdl_op_sac_reruns(t, &nmm))
			op_again += n;
		linears += n;
		if (j->method != MDL_FULL)
			frozen += n;
		if (is_adapted(j, t))
			adapted += n;
		if (mdl_job_quantised(j, t))
			quantised += n;
		if (mdl_job_quantised(j, t) && is_adapted(j, t))
			adapted_q += n;
		if (mdl_job_lora_fused(a, j, t)) {
			unsloth += n;
			unsloth_mlp |= (t->target & MDL_T_DOWN) && a->gated_mlp;
		}
		if (t->copies > 1)
			experts = fmax(experts, n);
	}
	double moe_layers = a->experts ? (a->moe_layers ? (double)a->moe_layers / a->layers : 1) : 0;
	/* the router's 4, and 3 per expert launched (grouped: one a MoE layer, so experts is
	 * already the share of the layers that hold them) */
	double routing = moe_layers * 4 + 3 * experts;
	double norms = (double)a->norms_per_layer + (a->qk_norm ? 2 : 0);
	bool gqa = a->kv_heads && a->kv_heads < a->heads;
	double dropout = j->lora_dropout > 0 ? 1 : 0;
	double fwd, core;
	if (j->compile) {
		core = 1;
		fwd = linears + core + norms + (mdl_arch_rotary(a) ? 1 : 0) + 1 + routing +
		      adapted * (3 + dropout);
	} else {
		/* Unsloth's fused functions: X A and the addmm_ of (X A) B into the output */
		double lora = (adapted - unsloth) * (4 + dropout) + unsloth * LORA_FUSED_KERNELS;
		core = mdl_attn_fused(j->attention) ? 1 + (gqa ? 2 : 0) + 1
						      : 7 + (a->attn_dropout > 0 ? 1 : 0);
		bool eager = j->eager_ops;
		fwd = linears + norms * (eager && !a->norm_bias ? 8 : 1) +
		      (!mdl_arch_rotary(a) ? 0 : eager ? 10 : 2) +
		      core + (a->gated_mlp && !j->fused_glu && !unsloth_mlp ? 2 : 1) +
		      2 * (a->resid_dropout > 0 ? 2 : 1) +
		      routing + lora;
	}
	bool gptq = mdl_job_gptq(j);
	double cast;
	bnb_written(j, &cast);
	double per_dq = torchao_eager(j)	? TORCHAO_NF4_KERNELS
			: cast > 0		? 2.0 /* dequantise, then cast */
			: !gptq || j->compile ? 1.0
			: j->quant_desc_act   ? GPTQ_KERNELS_ACT_ORDER
					      : GPTQ_KERNELS; /* the dequantisation's */
	double dq = quantised * per_dq;
	/* DoRA (dora_weight_pass): its norm, which nothing backpropagates through (a quantised
	 * base dequantised once more for it), and its output's ops, each with its gradients;
	 * under lora_dropout PEFT's base product again, with its input gradient */
	double dora_norm = 0, dora_out = 0, dora_mm = 0;
	if (j->dora) {
		double a_b = mdl_job_adapter_bytes(j), w_b = mdl_job_weight_bytes(j);
		double p_b = mdl_job_lora_out_bytes(j);
		dora_norm = j->compile ? DORA_NORM_KERNELS_COMPILED
				       : DORA_NORM_KERNELS + (p_b != a_b) + (w_b != a_b);
		dora_norm = adapted * dora_norm + adapted_q * per_dq;
		dora_mm = adapted * (2.0 + (j->lora_dropout > 0 ? 1 : 0));
		dora_out = adapted * ((j->compile ? 1.0 : DORA_OUTPUT_KERNELS) +
				      (j->lora_dropout > 0 ? 1 : 0));
	}
	fwd += dq + dora_norm + dora_out;
	k->fwd = fwd;
	k->bwd = 2 * (fwd - dq - dora_norm) - frozen + (gptq ? 0 : dq) -
		 (j->dora && j->lora_dropout > 0 ? adapted : 0); /* a frozen product's */
	/* a full (or per-op) recompute runs the forward again; Megatron's selective recompute
	 * the attention core only */
	k->recompute = 0;
	unsigned m = mdl_job_rc_modules(j);
	double mods = 0; /* the matrix kernels of the modules it makes again beside the core */
	rc_module_params(a, m, &mods);
	if (j->recompute == MDL_RC_FULL || j->recompute == MDL_RC_OP)
		k->recompute = fwd;
	else if (j->recompute == MDL_RC_SELECTIVE)
		/* and a kernel for each norm, activation or rotary pair made again, and an
		 * MLP's activation beside its GEMMs */
		k->recompute = (m & MDL_RM_CORE_ATTN ? core : 0) + mods +
			       (m & MDL_RM_LAYERNORM ? moe_layers + (a->kv_lora_rank ? 1 : 0) : 0) +
			       (m & MDL_RM_MOE_ACT ? moe_layers : 0) +
			       (m & MDL_RM_MLA_UP && a->kv_lora_rank ? 2 : 0) +
			       (m & MDL_RM_MLP ? 1 - moe_layers : 0);

	bool fused = mdl_attn_fused(j->attention);
	double mm_core = fused ? 1 : 2;
	k->mm_fwd = linears + 2 * adapted + mm_core + dora_mm;
	k->mm_bwd = 2 * linears - frozen + 4 * adapted + (fused ? 1 : 4) +
		    (j->dora && j->lora_dropout > 0 ? adapted : 0);
	double mm_sel = (m & MDL_RM_CORE_ATTN ? mm_core : 0) + mods;
	k->mm_recompute = j->recompute == MDL_RC_FULL	   ? k->mm_fwd
			  : j->recompute == MDL_RC_OP	   ? op_again
			  : j->recompute == MDL_RC_SELECTIVE ? mm_sel
							     : 0;
	/* a recompute that stops early leaves out the down projection's GEMM, and the residual
	 * add after it where that is a kernel of its own */
	double stops;
	mdl_job_early_stop(a, j, &stops);
	k->mm_recompute -= stops;
	k->recompute -= stops * (j->compile ? 1 : 2);
}

/* TE's cast_transpose: a 16-bit element read, its FP8 copy and FP8 transpose written
 * (transformer_engine/common/transpose/cast_transpose.cu; the FP8 GEMMs of Hopper take TN
 * operands only, so forward saves the transposed input for the weight gradient) [A: TE source] */
#define FP8_CAST_BYTES (2.0 + 1.0 + 1.0)
/* A frozen weight's input (a LoRA base): te.Linear casts it without the transpose, which only
 * the weight gradient reads (module/linear.py, TE 1.12: fp8_cast_transpose_fused only where
 * weight.requires_grad, else cast_to_fp8), while backward still casts and transposes the
 * output gradient (module/base.py, grad_output_preprocess) [A: TE source] */
#define FP8_CAST_BYTES_FROZEN (2.0 + 1.0)

void mdl_job_fp8_casts(const struct mdl_arch *a, const struct mdl_job *j,
		       struct mdl_fp8_casts *c)
{
	*c = (struct mdl_fp8_casts){0};
	if (j->precision != MDL_FP8)
		return;
	/* torchao's dynamic cast of an e-byte tensor: the amax pass reads it, the cast reads it
	 * again and writes the byte; the output gradient's two casts share one amax */
	double e = mdl_job_act_bytes(j), ao = 2.0 * e + 1.0, ao_grad = 3.0 * e + 2.0;
	bool torchao = j->fp8_recipe == MDL_FP8_TORCHAO;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (!t->matmul || t->cols <= 1)
			continue;
		double share = mdl_tensor_share(a, t), pass = (double)t->active * share;
		double w = (double)(t->rows * t->cols * t->copies) * share;
		if (torchao) {
			c->fwd_per_token += ao * (double)t->rows * pass;
			c->bwd_per_token +=
				(ao_grad * (double)t->cols + ao * (double)t->rows) * pass;
			c->weights += ao * w;
			c->weights_bwd += ao * w;
			c->experts += t->copies > 1 ? ao * w : 0;
			continue;
		}
		double in = j->method == MDL_FULL ? FP8_CAST_BYTES : FP8_CAST_BYTES_FROZEN;
		c->fwd_per_token += in * (double)t->rows * pass;
		c->bwd_per_token += FP8_CAST_BYTES * (double)t->cols * pass;
		c->weights += FP8_CAST_BYTES * w;
		c->experts += t->copies > 1 ? FP8_CAST_BYTES * w : 0;
	}
}

void mdl_job_expert_states(const struct mdl_arch *a, const struct mdl_job *j, uint64_t nlayers,
			   struct mdl_states *s)
{
	int i = 0, n = 0;

	while (i < a->nlayer && a->layer[i].copies <= 1)
		i++;
	if (i == a->nlayer) { /* a dense model: no experts, nothing (and no copy of the arch) */
		memset(s, 0, sizeof *s);
		return;
	}
	struct mdl_arch e = *a; /* the same model with only its routed experts' tensors */
	for (; i < a->nlayer; i++)
		if (a->layer[i].copies > 1)
			e.layer[n++] = a->layer[i];
	e.nlayer = n;
	e.nouter = 0;
	mdl_job_states_part(&e, j, nlayers, false, false, s);
}

void mdl_job_states(const struct mdl_arch *a, const struct mdl_job *j, struct mdl_states *s)
{
	mdl_job_states_part(a, j, a->layers, true, true, s);
}

uint64_t mdl_job_trainable(const struct mdl_arch *a, const struct mdl_job *j)
{
	struct mdl_states s;

	mdl_job_states(a, j, &s);
	return s.trainable_params;
}

/*
 * The share of the s x s score matrix FlashAttention-2 computes, averaged over the layers: it
 * skips the blocks above the causal diagonal (Dao 2023, sec. 3.1.1), a half, and with a
 * sliding window of w < s also those more than w behind the query (flash-attn's window_size,
 * which the Hugging Face integration passes for sliding_window): a band of s w - w^2 / 2.
 */
static double flash_share(const struct mdl_arch *a, uint64_t seq)
{
	double s = (double)seq, w = (double)a->sliding_window;
	double band = a->sliding_window && w < s ? (s * w - 0.5 * w * w) / (s * s) : 0.5;
	double nw = (double)a->sliding_layers, L = (double)a->layers;

	return ((L - nw) * 0.5 + nw * band) / L;
}

/*
 * The share of the s x s score matrix the model-FLOPs convention counts, averaged over the
 * layers: every key a query may see, with no causal discount (Narayanan et al. 2021, eq. 3),
 * so all s of them in a full layer and w in a layer windowed to w < s. Counting s^2 in a
 * windowed layer would credit the model with work its definition excludes: Mistral-7B-v0.1
 * (window 4096) at 32k tokens would report about twice its FLOPs, above the GPU's peak.
 */
static double counted_share(const struct mdl_arch *a, uint64_t seq)
{
	double s = (double)seq, w = (double)a->sliding_window;
	double keys = a->sliding_window && w < s ? w / s : 1.0;
	double nw = (double)a->sliding_layers, L = (double)a->layers;

	return ((L - nw) + nw * keys) / L;
}

double mdl_job_early_stop(const struct mdl_arch *a, const struct mdl_job *j, double *layers)
{
	*layers = 0;
	if (j->recompute != MDL_RC_FULL || !j->recompute_early_stop || a->norms_per_layer == 4 ||
	    a->resid_dropout > 0)
		return 0;
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		/* the dense MLP's (build_inventory); the shared experts' output is added to the
		 * routed ones' in a MoE layer, whose down projections it is not */
		if (strcmp(t->name, "down_proj") || is_adapted(j, t))
			continue;
		*layers = mdl_tensor_share(a, t);
		return (double)t->rows * (double)t->cols * *layers;
	}
	return 0;
}

void mdl_job_flops(const struct mdl_arch *a, const struct mdl_job *j, struct mdl_flops *f)
{
	double tokens = (double)j->seq * (double)j->micro_batch;
	/* the keys a query's document spans: the sequence, or its packed document */
	uint64_t span = j->doc_tokens && j->doc_tokens < j->seq ? j->doc_tokens : j->seq;
	double layer_mm = 0, adapters = 0, head = 0, dora_eye = 0, dora_base = 0;
	double own_dtype = 0; /* adapters PEFT's layers run in their own dtype (not Unsloth's) */
	bool qkv_eye = false; /* a fused q/k/v projection's one identity (dora_passes) */

	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		double share = mdl_tensor_share(a, t);
		double in = (double)t->rows, out = (double)t->cols, r = (double)j->lora_rank;
		if (t->matmul)
			layer_mm += in * out * t->active * share;
		if (!is_adapted(j, t))
			continue;
		adapters += r * (in + out) * t->active * share;
		if (!mdl_job_lora_fused(a, j, t)) /* Unsloth's cast A and B to X's dtype */
			own_dtype += r * (in + out) * t->active * share;
		/* DoRA (dora_weight_pass): lora_A over the identity, lora_B over its in x r, every
		 * copy whatever the tokens; PEFT's base product again where lora_dropout makes x
		 * another (peft/tuners/lora/variants.py, DoraLinearVariant.forward: base_result
		 * None unless the dropout is nn.Identity; dora.py: F.linear(x, weight)) [A] */
		if (j->dora) {
			bool shared = in_fused_qkv(j, t);
			double eye = shared && qkv_eye ? 0 : in * in * r;
			qkv_eye |= shared;
			dora_eye += 2.0 * (eye + in * r * out) * t->copies * share;
			if (j->lora_dropout > 0)
				dora_base += 2.0 * tokens * in * out * t->active * share;
		}
	}
	for (int i = 0; i < a->nouter; i++)
		if (a->outer[i].matmul)
			head += (double)a->outer[i].rows * (double)a->outer[i].cols;

	double weights = 2.0 * tokens * layer_mm, lora = 2.0 * tokens * adapters, stops;
	/* QK^T and attention x V: 2 matmuls of 2 b s^2 (n_h d) FLOPs each over the whole score
	 * matrix (what an eager kernel executes); MLA's values have v_head_dim. The convention
	 * counts the keys each query may see, no causal discount (counted_share). Packed
	 * documents of d tokens: s / d blocks of d x d on the diagonal, s d of the s^2 (a query
	 * sees its own document's keys, so the convention counts those alone, as NeMo's packed
	 * fine-tuning rows count about 6 N a token, published.md C.6). */
	double scores = 2.0 * (double)j->micro_batch * (double)j->seq * (double)j->seq *
			(double)a->heads * (double)(a->head_dim + a->v_head_dim);
	double blocks = scores * (double)span / (double)j->seq;
	double counted = counted_share(a, span), attn = blocks * counted;
	double trained = j->method == MDL_FULL ? weights : lora;
	double frozen = j->method == MDL_FULL ? 0 : weights;
	f->adapter_fwd = j->method == MDL_FULL ? 0 : 2.0 * tokens * own_dtype;

	f->layer_fwd = trained + frozen + attn;
	/* backward = 2 x forward (input and weight gradients); frozen weights skip the weight
	 * gradient, so 1 x forward. NeMo's LoRA rows (published.md C.6) count the same ~4 N T. */
	f->layer_bwd = 2.0 * (trained + attn) + frozen;
	switch (j->recompute) {
	case MDL_RC_FULL:
		/* one more forward of every layer, to its last matmul where it stops early */
		f->layer_recompute = f->layer_fwd - 2.0 * tokens * mdl_job_early_stop(a, j, &stops);
		break;
	case MDL_RC_SELECTIVE: {
		/* the attention core again (Korthikanti et al. 2022), and the matmuls of the
		 * modules recompute_modules names beside it */
		unsigned m = mdl_job_rc_modules(j);
		f->layer_recompute = (m & MDL_RM_CORE_ATTN ? attn : 0) +
				     2.0 * tokens * rc_module_params(a, m, NULL);
		break;
	}
	case MDL_RC_NONE:
		f->layer_recompute = 0;
		break;
	case MDL_RC_OP:
		/* the matmuls whose outputs are not kept run again; the attention core is kept */
		f->layer_recompute = 2.0 * tokens * mdl_op_sac_recomputed(a);
		break;
	}
	f->head_fwd = 2.0 * tokens * head;
	/* the weight gradient too where the head is trained (whole, or its copy under PEFT) */
	bool head_trained = j->method == MDL_FULL;
	for (int i = 0; i < a->nouter; i++)
		if (strcmp(a->outer[i].name, "lm_head") == 0)
			head_trained = mdl_job_trains_whole(j, &a->outer[i]);
	f->head_bwd = (head_trained ? 2.0 : 1.0) * f->head_fwd;
	/* FlashAttention-2 skips the key/value blocks entirely above the causal mask's diagonal
	 * (Dao 2023, sec. 3.1.1), so it executes about half of the attention FLOPs; the eager
	 * kernel computes all of s^2 and masks. skip is what the convention counts beyond what
	 * runs (negative where an eager kernel computes the scores outside a window or another
	 * packed document). The recomputed attention (full or selective) is skipped alike.
	 * Packed, a fused variable-length kernel runs each document's causal block alone
	 * (flash-attn's flash_attn_varlen_func over cu_seqlens) [A: flash-attn API]. */
	double run = mdl_attn_fused(j->attention) ? blocks * flash_share(a, span) : scores;
	double skip = attn - run;
	f->attn_half_fwd_exec = 2.0 * tokens * mdl_arch_attn_proj_params(a) + attn - skip;
	f->attn_core_fwd_exec = attn - skip;
	/* FlashAttention's backward recomputes the scores (QK^T) before its four gradient
	 * matmuls, five to the forward's two: 2.5 times the forward's FLOPs, as the FlashAttention
	 * benchmarks count the rates the catalog quotes (Dao-AILab/flash-attention
	 * benchmarks/benchmark_flash_attention.py, flops(): bwd = 2.5 x fwd) [A: source]; the
	 * eager backward reads the saved scores, twice the forward */
	double rescore = mdl_attn_fused(j->attention) ? 0.5 * (attn - skip) : 0;
	f->attn_core_bwd_exec = 2.0 * (attn - skip) + rescore;
	f->dora_fwd = dora_eye + dora_base;
	f->dora_bwd = dora_base;
	f->layer_fwd_exec = f->layer_fwd - skip + f->dora_fwd;
	f->layer_bwd_exec = f->layer_bwd - 2.0 * skip + rescore + f->dora_bwd;
	f->layer_recompute_exec =
		f->layer_recompute - (mdl_job_core_again(j) ? skip : 0) +
		(dora_again(j) ? f->dora_fwd : 0);
}

double mdl_job_forward_flops(const struct mdl_arch *a, const struct mdl_job *j)
{
	struct mdl_flops f;

	mdl_job_flops(a, j, &f);
	return (double)a->layers * f.layer_fwd + f.head_fwd;
}

double mdl_job_executed_flops(const struct mdl_arch *a, const struct mdl_job *j)
{
	struct mdl_flops f;

	mdl_job_flops(a, j, &f);
	return (double)a->layers * (f.layer_fwd_exec + f.layer_bwd_exec + f.layer_recompute_exec) +
	       f.head_fwd + f.head_bwd;
}

double mdl_job_model_flops(const struct mdl_arch *a, const struct mdl_job *j)
{
	struct mdl_flops f;

	mdl_job_flops(a, j, &f);
	return (double)a->layers * (f.layer_fwd + f.layer_bwd) + f.head_fwd + f.head_bwd;
}

double mdl_job_hardware_flops(const struct mdl_arch *a, const struct mdl_job *j)
{
	struct mdl_flops f;

	mdl_job_flops(a, j, &f);
	return mdl_job_model_flops(a, j) + (double)a->layers * f.layer_recompute;
}

static const char *const method_names[] = {"full", "lora", "qlora", NULL};
static const char *const precision_names[] = {"bf16-mixed", "bf16", "fp16-mixed", "fp32", "fp8",
					      NULL};
static const char *const optimizer_names[] = {
	"adamw", "adamw8bit", "sgd", "lion", "adafactor", "paged-adamw", "paged-adamw8bit", NULL};
/*
 * The Hugging Face Trainer's names for its optimizers (TrainingArguments.optim, transformers'
 * OptimizerNames), which LLaMA-Factory, TRL, Axolotl and Unsloth configs carry, as the
 * optimizer each builds: adamw_torch torch.optim.AdamW, on CUDA by its multi-tensor (foreach)
 * path, adamw_torch_fused with fused=True, adamw_apex_fused apex's FusedAdam; adamw_bnb_8bit and
 * adamw_8bit bitsandbytes' AdamW8bit, paged_adamw_32bit and paged_adamw_8bit its paged AdamW,
 * lion_32bit its Lion [A: transformers source]. adamw_hf (transformers' own loop over the
 * parameters) is neither path and is left out.
 */
static const struct {
	const char *name;
	enum mdl_optimizer optimizer;
	int foreach;
} trainer_optims[] = {
	{"adamw_torch", MDL_ADAMW, 1},		     {"adamw_torch_fused", MDL_ADAMW, 0},
	{"adamw_apex_fused", MDL_ADAMW, 0},	     {"adamw_bnb_8bit", MDL_ADAMW8BIT, -1},
	{"adamw_8bit", MDL_ADAMW8BIT, -1},	     {"paged_adamw_32bit", MDL_PAGED_ADAMW, -1},
	{"paged_adamw_8bit", MDL_PAGED_ADAMW8BIT, -1}, {"lion_32bit", MDL_LION, -1},
};

int mdl_optimizer_trainer(const char *name, int *foreach)
{
	for (size_t i = 0; i < sizeof trainer_optims / sizeof trainer_optims[0]; i++)
		if (!strcmp(trainer_optims[i].name, name)) {
			if (foreach)
				*foreach = trainer_optims[i].foreach;
			return (int)trainer_optims[i].optimizer;
		}
	if (foreach)
		*foreach = -1;
	return -1;
}

static const char *const recompute_names[] = {"none", "selective", "full", "op", NULL};
static const char *const attention_names[] = {"flash", "eager", "cudnn", "triton", NULL};
static const char *const loss_names[] = {"full",
					 "chunked",
					 "chunked-output",
					 "fused",
					 "fused-fp32",
					 "vocab-parallel",
					 "vocab-parallel-fused",
					 "vocab-parallel-te",
					 "vocab-parallel-te-legacy",
					 NULL};
static const char *const grad_dtype_names[] = {"param", "fp32", NULL};
static const char *const master_names[] = {"fp32", "remainder", NULL};
static const char *const swiglu_names[] = {"fused", "eager", NULL}; /* mdl_job.fused_glu */
static const char *const quant_names[] = {"nf4", "nf4-legacy", "gptq", "nf4-torchao", NULL};
static const char *const fp8_recipe_names[] = {"te", "torchao", NULL};
static const char *const upcast_names[] = {"none", "norms", "all", NULL};
static const char *const lora_dtype_names[] = {"model", "fp32", NULL}; /* mdl_job.lora_fp32 */
static const char *const lora_kernels_names[] = {"peft", "unsloth", NULL}; /* job.fused_lora */
static const char *const quant_from_names[] = {"model", "fp16"};         /* mdl_job.quant_fp16 */

const char *mdl_method_name(enum mdl_method m)
{
	return method_names[m];
}
const char *mdl_precision_name(enum mdl_precision p)
{
	return precision_names[p];
}
const char *mdl_optimizer_name(enum mdl_optimizer o)
{
	return optimizer_names[o];
}
const char *mdl_recompute_name(enum mdl_recompute r)
{
	return recompute_names[r];
}

/* recompute_modules' names, in MDL_RM_* bit order */
static const char *const rc_module_names[] = {"core_attn", "layernorm", "moe_act",
					      "mla_up_proj", "mlp"};
#define RC_MODULES (sizeof rc_module_names / sizeof *rc_module_names)
#define RC_ALLOWED "(allowed: core_attn, layernorm, moe_act, mla_up_proj, mlp)"

const char *mdl_rc_module_name(unsigned i)
{
	return i < RC_MODULES ? rc_module_names[i] : NULL;
}

int mdl_rc_modules_parse(const char *s, uint8_t *mask, char *err, size_t errlen)
{
	*mask = 0;
	while (*s) {
		size_t n = strcspn(s, ",");
		unsigned i = 0;
		while (i < RC_MODULES &&
		       !(strlen(rc_module_names[i]) == n && !strncmp(s, rc_module_names[i], n)))
			i++;
		if (i == RC_MODULES) {
			/* Megatron-Core's others: moe and shared_experts (whole checkpoints with
			 * their communication), the GatedDeltaNet and hyper-connection ones */
			snprintf(err, errlen,
				 "--recompute-modules: '%.*s' is not modelled " RC_ALLOWED,
				 (int)(n > 40 ? 40 : n), s);
			return -1;
		}
		*mask |= (uint8_t)(1u << i);
		s += n + (s[n] == ',');
	}
	if (!*mask) {
		snprintf(err, errlen, "--recompute-modules: give one module at least " RC_ALLOWED);
		return -1;
	}
	return 0;
}

void mdl_rc_modules_str(unsigned mask, char sep, char *buf, size_t n)
{
	size_t o = 0;
	char between[2] = {sep, 0};
	if (n)
		buf[0] = 0;
	for (unsigned i = 0; i < RC_MODULES && o < n; i++)
		if (mask >> i & 1)
			o += (size_t)snprintf(buf + o, n - o, "%s%s", o ? between : "",
					      rc_module_names[i]);
}
const char *mdl_attention_name(enum mdl_attention a)
{
	return attention_names[a];
}
bool mdl_loss_upcasts(enum mdl_loss l)
{
	return l == MDL_LOSS_FULL || l == MDL_LOSS_FUSED_FP32;
}

bool mdl_loss_vocab_parallel(enum mdl_loss l)
{
	return l == MDL_LOSS_VOCAB_PARALLEL || l == MDL_LOSS_VOCAB_PARALLEL_FUSED ||
	       l == MDL_LOSS_VOCAB_PARALLEL_TE || l == MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY;
}

const char *mdl_loss_name(enum mdl_loss l)
{
	return loss_names[l];
}
const char *mdl_grad_dtype_name(enum mdl_grad_dtype g)
{
	return grad_dtype_names[g];
}
const char *mdl_master_name(enum mdl_master m)
{
	return master_names[m];
}
const char *mdl_quant_name(enum mdl_quant q)
{
	return quant_names[q];
}
const char *mdl_fp8_recipe_name(enum mdl_fp8_recipe r)
{
	return fp8_recipe_names[r];
}
const char *mdl_upcast_name(enum mdl_upcast u)
{
	return upcast_names[u];
}
const char *mdl_lora_dtype_name(bool fp32)
{
	return lora_dtype_names[fp32 ? 1 : 0];
}
const char *mdl_lora_kernels_name(bool fused)
{
	return lora_kernels_names[fused ? 1 : 0];
}
const char *mdl_quant_from_name(bool fp16)
{
	return quant_from_names[fp16 ? 1 : 0];
}

int mdl_parse_enum(const char *what, const char *s, const char *also, int *out, char *err,
		   size_t errlen)
{
	static const struct {
		const char *what;
		const char *const *names;
	} kinds[] = {
		{"method", method_names},       {"precision", precision_names},
		{"optimizer", optimizer_names}, {"recompute", recompute_names},
		{"attention", attention_names}, {"loss", loss_names},
		{"grad-dtype", grad_dtype_names}, {"quant", quant_names},
		{"master-weights", master_names}, {"swiglu", swiglu_names},
		{"kbit-upcast", upcast_names}, {"lora-dtype", lora_dtype_names},
		{"lora-kernels", lora_kernels_names},
	};
	for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		if (strcmp(kinds[k].what, what) != 0)
			continue;
		if (also && strcmp(also, s) == 0) {
			*out = -1;
			return 0;
		}
		/* the names listed, cut short (never overrun) where they outgrow the buffer */
		char allowed[512] = "";
		size_t used = also ? (size_t)snprintf(allowed, sizeof allowed, "%s", also) : 0;
		for (int i = 0; kinds[k].names[i]; i++) {
			if (strcmp(kinds[k].names[i], s) == 0) {
				*out = i;
				return 0;
			}
			if (used < sizeof allowed)
				used += (size_t)snprintf(allowed + used, sizeof allowed - used,
							 "%s%s", used ? ", " : "",
							 kinds[k].names[i]);
		}
		bool optim = !strcmp(what, "optimizer");
		if (optim && (*out = mdl_optimizer_trainer(s, NULL)) >= 0)
			return 0;
		snprintf(err, errlen, "unknown %s '%s' (allowed: %s%s)", what, s, allowed,
			 optim ? "; or a Hugging Face Trainer optim name: adamw_torch, "
				 "adamw_torch_fused, adamw_apex_fused, adamw_bnb_8bit, adamw_8bit, "
				 "paged_adamw_32bit, paged_adamw_8bit, lion_32bit"
			       : "");
		return -1;
	}
	snprintf(err, errlen, "unknown setting '%s'", what);
	return -1;
}
