/* test_job — bytes per state, activation inventory, FLOPs. */
#include <math.h>
#include <string.h>

#include "../model/act.h"
#include "../model/job.h"
#include "../model/layout.h"
#include "tests.h"

static struct mdl_arch load(const char *file)
{
	struct mdl_arch a;
	char err[256];
	if (mdl_arch_load(model_path(file), &a, err, sizeof err) < 0)
		memset(&a, 0, sizeof a);
	return a;
}

static double state_bytes_per_param(enum mdl_precision p, enum mdl_optimizer o)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = p, .optimizer = o};
	struct mdl_states s;
	mdl_job_states(&a, &j, &s);
	return (s.weights_bytes + s.gradients_bytes + s.optimizer_bytes) / (double)s.params;
}

static void bytes_per_parameter_follow_precision_and_optimizer(void)
{
	/* DESIGN.md conventions; ZeRO paper sec. 3.1 K = 12; 8-bit states 2 B + block scales */
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_BF16_MIXED, MDL_ADAMW), 16.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_FP16_MIXED, MDL_ADAMW), 16.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_BF16, MDL_ADAMW), 8.0, 1e-12);
	/* Megatron's fp32 main grads: 2 + 4 + 12 = 18 B (Korthikanti et al. 2022, fig. 1) */
	{
		struct mdl_arch a = load("llama-3.1-8b.json");
		struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
				    .optimizer = MDL_ADAMW, .grad_dtype = MDL_GRAD_FP32};
		struct mdl_states st;
		mdl_job_states(&a, &j, &st);
		CU_ASSERT_DOUBLE_EQUAL((st.weights_bytes + st.gradients_bytes + st.optimizer_bytes) /
					       (double)st.params,
				       18.0, 1e-12);
	}
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_FP32, MDL_ADAMW), 16.0, 1e-12);
	/* Apex DistributedFusedAdam's param remainders: the bf16 weight (2) is the master's high
	 * half, the optimizer keeps its low half (2) and fp32 m and v (8): 2 + 2 + 2 + 8 = 14 B;
	 * SGD's one momentum: 2 + 2 + 2 + 4 = 10 B */
	{
		struct mdl_arch a = load("llama-3.1-8b.json");
		struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
				    .optimizer = MDL_ADAMW, .master = MDL_MASTER_REMAINDER};
		struct mdl_states st;
		mdl_job_states(&a, &j, &st);
		CU_ASSERT_DOUBLE_EQUAL(st.optimizer_bytes / (double)st.params, 10.0, 1e-12);
		double all = st.weights_bytes + st.gradients_bytes + st.optimizer_bytes;
		CU_ASSERT_DOUBLE_EQUAL(all / (double)st.params, 14.0, 1e-12);
		j.optimizer = MDL_SGD;
		mdl_job_states(&a, &j, &st);
		CU_ASSERT_DOUBLE_EQUAL(st.optimizer_bytes / (double)st.params, 6.0, 1e-12);
	}
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_BF16_MIXED, MDL_ADAMW8BIT),
			       2 + 2 + 4 + 2 * (1 + 4.0 / 256), 1e-12);
	/* bitsandbytes' paged optimizers keep the same states, in unified memory */
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_BF16_MIXED, MDL_PAGED_ADAMW8BIT),
			       state_bytes_per_param(MDL_BF16_MIXED, MDL_ADAMW8BIT), 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_BF16_MIXED, MDL_PAGED_ADAMW), 16.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_BF16_MIXED, MDL_SGD), 12.0, 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(state_bytes_per_param(MDL_BF16_MIXED, MDL_LION), 12.0, 1e-12);
	/* Adafactor: master copy plus factored rows + cols, a small fraction of a byte */
	double ada = state_bytes_per_param(MDL_BF16_MIXED, MDL_ADAFACTOR);
	CU_ASSERT(ada > 8.0 && ada < 8.01);
}

static void qlora_base_weights_are_nf4_with_double_quantisation(void)
{
	struct mdl_arch a = load("llama-2-7b.json");
	struct mdl_job j = {.method = MDL_QLORA, .lora_rank = 8, .lora_targets = MDL_T_ALL,
			    .precision = MDL_BF16_MIXED, .optimizer = MDL_ADAMW};
	struct mdl_states s;
	struct mdl_counts c;

	mdl_arch_counts(&a, &c);
	mdl_job_states(&a, &j, &s);
	/* linear weights at 4.127 bits, embeddings, head and norms at 2 bytes (QLoRA sec. 3) */
	double linear = (double)a.layers * (c.layer_params - 2 * a.hidden);
	double other = (double)c.params - linear;
	double want = linear * (0.5 + 0.127 / 8) + 2 * other + 2 * (double)s.trainable_params;
	ASSERT_NEAR_REL(s.weights_bytes, want, 1e-3);
	CU_ASSERT(s.trainable_params > 0 && s.trainable_params < c.params / 100);
	CU_ASSERT_DOUBLE_EQUAL(s.optimizer_bytes, 12.0 * s.trainable_params, 1);
	/* each pass dequantises the linear weights of a layer: 4.127 bits read, 2 bytes written,
	 * in forward and again in backward; Llama-2-7B: 4 x 4096^2 + 3 x 4096 x 11008 =
	 * 202,375,168 per layer */
	struct mdl_weight_passes d;
	mdl_job_weight_passes(&a, &j, &d);
	ASSERT_NEAR_REL(d.fwd, 202375168.0 * (2 + 0.5 + 0.127 / 8), 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(d.bwd, d.fwd, 1e-3);
	/* without double quantisation each block of 64 keeps an fp32 constant: 0.5 bits a weight
	 * where double quantisation keeps 0.127, read by each pass as well */
	j.plain_nf4 = true;
	struct mdl_states plain;
	mdl_job_states(&a, &j, &plain);
	ASSERT_NEAR_REL(plain.weights_bytes - s.weights_bytes, linear * (0.5 - 0.127) / 8, 1e-3);
	mdl_job_weight_passes(&a, &j, &d);
	ASSERT_NEAR_REL(d.fwd, 202375168.0 * (2 + 0.5 + 0.5 / 8), 1e-9);
	j.method = MDL_LORA;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_EQUAL(d.fwd + d.bwd, 0);
}

/*
 * A quantised head (job.quant_head, LitGPT under Lightning's BitsandbytesPrecision), by hand for
 * Llama-3.1-8B (vocab 128,256 x hidden 4,096 = 525,336,576 head weights): stored at
 * 0.515869 B a weight (NF4 with double-quantised constants) instead of 2, so the weights come
 * out 525,336,576 x 1.484131 = 779,668,224 B less; while one of its GEMMs runs, the fp16
 * dequantised copy and its bf16 cast are both alive, 4 B a weight = 2,101,346,304 B beside the
 * loss's own 8 x s x b x V / 8 of the chunked output; each pass reads the NF4 blocks, writes
 * fp16, reads it and writes bf16: 6.515869 B a weight, once a chunk of the 8, forward and again
 * backward. Under fp16 there is no cast: 2 B alive, 2.515869 B a pass. Context parallelism
 * halves the rest of the activations over two ranks, not the copies of the weight.
 */
static void quantised_head_dequantises_for_each_gemm(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_QLORA, .lora_rank = 8, .lora_targets = MDL_T_Q | MDL_T_V,
			    .precision = MDL_BF16, .optimizer = MDL_ADAMW, .seq = 512,
			    .micro_batch = 2, .loss = MDL_LOSS_CHUNKED_OUTPUT};
	double head = 128256.0 * 4096.0, nf4 = 0.5 + (8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
	double sbv = 512.0 * 2.0 * 128256.0;
	struct mdl_states plain, quant;

	mdl_job_states(&a, &j, &plain);
	CU_ASSERT_EQUAL(mdl_job_head_dequant(&a, &j, 1), 0);
	CU_ASSERT_EQUAL(mdl_job_head_dequant_live(&a, &j, 1), 0);
	double bwd = mdl_act_head_backward(&a, &j, 1, 1);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 8.0 * sbv / 8.0, 1);
	j.quant_head = true;
	j.quant_fp16 = true; /* Lightning's plugin quantises from fp16 (--quant-from auto) */
	mdl_job_states(&a, &j, &quant);
	CU_ASSERT_DOUBLE_EQUAL(plain.weights_bytes - quant.weights_bytes, 779668224.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant_live(&a, &j, 1), 4.0 * head, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), bwd + 4.0 * head, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant(&a, &j, 1), 8.0 * (nf4 + 6.0) * head, 1);
	/* context parallelism splits the tokens, not the weight: two ranks each hold half of
	 * the rest of the step's activations and the whole dequantised copies */
	struct mdl_layout l1 = {.tp = 1, .pp = 1, .dp = 1, .vp = 1, .ep = 1, .cp = 1}, l2 = l1;
	struct mdl_gpu_memory m1, m2;
	l2.cp = 2;
	mdl_layout_memory(&a, &j, &l1, 1, &m1);
	mdl_layout_memory(&a, &j, &l2, 1, &m2);
	CU_ASSERT_DOUBLE_EQUAL(m2.activations, (m1.activations - 4.0 * head) / 2 + 4.0 * head, 1);
	/* split over a vocab-parallel head; one GEMM under the full loss */
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant_live(&a, &j, 4), head, 1);
	j.loss = MDL_LOSS_FULL;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant(&a, &j, 1), (nf4 + 6.0) * head, 1);
	j.precision = MDL_FP16_MIXED;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant_live(&a, &j, 1), 2.0 * head, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant(&a, &j, 1), (nf4 + 2.0) * head, 1);
	/* quantised from the bf16 it was loaded in (--quant-from model): no cast either */
	j.precision = MDL_BF16;
	j.quant_fp16 = false;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant_live(&a, &j, 1), 2.0 * head, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_head_dequant(&a, &j, 1), (nf4 + 2.0) * head, 1);
}

/*
 * A base Lightning's BitsandbytesPrecision quantised from fp16 (job.quant_fp16, LitGPT), by hand
 * for Llama-2-7B's layer (202,375,168 quantised weights, the MLP's 45,088,768 the largest):
 * under bf16 each dequantisation writes fp16 (2 B a weight) and MatMul4Bit's .to(bf16) reads it
 * and writes bf16 (2 + 2): 6.515869 B a weight a pass where a base loaded in bf16 moves
 * 2.515869, one cast kernel more a linear each way, and both copies (4 B a weight) alive at the
 * cast; under fp16 nothing is cast.
 */
static void a_base_quantised_from_fp16_is_cast_after_each_dequantisation(void)
{
	struct mdl_arch a = load("llama-2-7b.json");
	struct mdl_job j = {.method = MDL_QLORA, .lora_rank = 8, .lora_targets = MDL_T_ALL,
			    .precision = MDL_BF16, .optimizer = MDL_ADAMW, .seq = 512,
			    .micro_batch = 1, .quant = MDL_QUANT_NF4_LEGACY};
	double nf4 = 0.5 + (8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;
	struct mdl_weight_passes d;
	struct mdl_launches bf, fp;
	mdl_job_launches(&a, &j, 1, &bf);
	j.quant_fp16 = true;
	mdl_job_weight_passes(&a, &j, &d);
	mdl_job_launches(&a, &j, 1, &fp);
	CU_ASSERT_DOUBLE_EQUAL(d.fwd, 202375168.0 * (nf4 + 6.0), 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(d.bwd, d.fwd, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 45088768.0 * 4.0, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(fp.fwd - bf.fwd, 7, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(fp.bwd - bf.bwd, 7, 1e-9);
	j.precision = MDL_FP16_MIXED;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_DOUBLE_EQUAL(d.fwd, 202375168.0 * (nf4 + 2.0), 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 45088768.0 * 2.0, 1e-3);
}

/*
 * GPTQ base weights (job.h, mdl_quant), by hand for Llama-2-7B's layer (hidden 4096, MLP 11008):
 * each linear 0.5 B a weight, 2.5 B per group of 128 input features and output feature (a 4-bit
 * zero point, an fp16 scale) and 4 B per input feature (g_idx). q, k, v, o: 8,388,608 + 32 x
 * 4096 x 2.5 + 16,384 = 8,732,672 each; gate, up: 22,544,384 + 32 x 11008 x 2.5 + 16,384 =
 * 23,441,408 each; down: 22,544,384 + 86 x 4096 x 2.5 + 44,032 = 23,469,056; 105,282,560 a
 * layer. Llama-2-70B the same way, with its bf16 embeddings, head and norms, is 36.64 GB:
 * TheBloke's Llama-2-70B-chat-GPTQ lists its 4-bit, group-128 files at 36.65 GB (README,
 * Provided files). Forward dequantises at 16.5 B per weight and per group and feature
 * (202,375,168 + 1,581,056 in all, x 16.5); backward nothing (the fp16 weights the forward kept),
 * a full recompute one pass more. The forward keeps 2 B per weight: 4 x 4096^2 x 2 =
 * 134,217,728 of attention, 3 x 4096 x 11008 x 2 = 270,532,608 of MLP. Launches: 9 more per
 * linear in forward, none in backward (nf4: 1 and 1).
 */
static void gptq_base_weights_and_their_dequantisation(void)
{
	struct mdl_arch a = load("llama-2-7b.json");
	struct mdl_job j = {.method = MDL_QLORA, .lora_rank = 8, .lora_targets = MDL_T_ALL,
			    .precision = MDL_BF16_MIXED, .optimizer = MDL_ADAMW,
			    .recompute = MDL_RC_NONE, .seq = 2048, .micro_batch = 1,
			    .quant = MDL_QUANT_GPTQ, .quant_group = MDL_GPTQ_GROUP};
	struct mdl_states s, nf4;
	mdl_job_states_part(&a, &j, 1, false, false, &s);
	j.quant = MDL_QUANT_NF4;
	mdl_job_states_part(&a, &j, 1, false, false, &nf4);
	j.quant = MDL_QUANT_GPTQ;
	/* the layer's norms (2 x 4096 x 2 B) and the adapters are the same in both */
	double norms = 2.0 * 4096 * 2, adapters = 2.0 * (double)s.trainable_params;
	CU_ASSERT_DOUBLE_EQUAL(s.weights_bytes - norms - adapters, 105282560.0, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(nf4.weights_bytes - norms - adapters,
			       202375168.0 * (0.5 + (8.0 / 64 + 32.0 / (64 * 256)) / 8), 1e-3);
	struct mdl_arch b = load("llama-2-70b.json");
	struct mdl_states w70;
	mdl_job_states(&b, &j, &w70);
	ASSERT_NEAR_REL(w70.weights_bytes - 2.0 * (double)w70.trainable_params, 36.65e9, 1e-3);

	struct mdl_weight_passes d;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_DOUBLE_EQUAL(d.fwd, (202375168.0 + 1581056.0) * 16.5, 1e-3);
	CU_ASSERT_EQUAL(d.bwd, 0);
	j.recompute = MDL_RC_FULL;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_DOUBLE_EQUAL(d.bwd, d.fwd, 1e-3);
	j.recompute = MDL_RC_NONE;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_dequant_kept(&a, &j, 1, true), 134217728.0, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_dequant_kept(&a, &j, 1, false), 270532608.0, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_dequant_kept(&a, &j, 2, false), 135266304.0, 1e-3);

	struct mdl_launches g, n;
	mdl_job_launches(&a, &j, 1, &g);
	j.quant = MDL_QUANT_NF4;
	mdl_job_launches(&a, &j, 1, &n);
	CU_ASSERT_DOUBLE_EQUAL(g.fwd - n.fwd, 7 * 8, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(n.bwd - g.bwd, 7, 1e-9);
	CU_ASSERT_EQUAL(mdl_job_dequant_kept(&a, &j, 1, true), 0); /* nf4 keeps no copy */

	/* act order (qlinear_cuda): the scales and zero points gathered to every weight, 22.5 B
	 * a weight and 4 kernels more a linear; group_size -1 (quant_group 0): one group, a zero
	 * point and a scale per output feature only */
	j.quant = MDL_QUANT_GPTQ;
	j.quant_desc_act = true;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_DOUBLE_EQUAL(d.fwd, 202375168.0 * 22.5 + 1581056.0 * 16.5, 1e-3);
	mdl_job_launches(&a, &j, 1, &n);
	CU_ASSERT_DOUBLE_EQUAL(n.fwd - g.fwd, 7 * 4, 1e-9);
	/* compiled: one fused kernel, 0.5 + 2 B a weight and per group and feature */
	j.compile = true;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_DOUBLE_EQUAL(d.fwd, (202375168.0 + 1581056.0) * 2.5, 1e-3);
	CU_ASSERT_EQUAL(d.bwd, 0);
	j.compile = false;
	j.quant_desc_act = false;
	j.quant_group = 0;
	mdl_job_states_part(&a, &j, 1, false, false, &s);
	double cols = 4 * 4096.0 + 2 * 11008.0 + 4096.0, rows = 4 * 4096.0 + 2 * 4096.0 + 11008.0;
	CU_ASSERT_DOUBLE_EQUAL(s.weights_bytes - norms - adapters,
			       202375168.0 / 2 + 2.5 * cols + 4 * rows, 1e-3);
}

/*
 * torchao's NF4Tensor (torchtune's QLoRA), by hand for Llama-2-7B's layer (202,375,168 quantised
 * weights; its largest linear, the MLP's, 11,008 x 4,096 = 45,088,768): eagerly each pass moves,
 * per weight, the nibbles shifted and masked out (0.5 + 0.5 each), cast to int64 (0.5 + 4
 * each), looked up (4 read, 1 written each), the block constants rebuilt ((1 + 6) / 64), repeated
 * to every weight (1 each half), the products (3 each half) and the stack (2 + 2): 33.109375 B,
 * in forward and again for the input gradient, 13 kernels a linear each way where
 * bitsandbytes launches one; while it runs the two int64 index tensors (8 B a weight), the
 * halves looked up, the halves scaled and the weight stacked (2 B each) are alive, 14 B a
 * weight of the largest linear where bitsandbytes' dequantised weight holds 2. Compiled, one
 * pass as bitsandbytes'. Neither keeps a linear's input.
 */
static void torchao_nf4_dequantises_by_a_chain_of_ops(void)
{
	struct mdl_arch a = load("llama-2-7b.json");
	struct mdl_job j = {.method = MDL_QLORA, .lora_rank = 8, .lora_targets = MDL_T_ALL,
			    .precision = MDL_BF16_MIXED, .optimizer = MDL_ADAMW,
			    .recompute = MDL_RC_NONE, .seq = 2048, .micro_batch = 1,
			    .quant = MDL_QUANT_NF4_TORCHAO};
	struct mdl_weight_passes d, b;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_DOUBLE_EQUAL(d.fwd, 202375168.0 * 33.109375, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(d.bwd, d.fwd, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 45088768.0 * 14, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 2, false), 45088768.0 * 7, 1e-3);
	CU_ASSERT_FALSE(mdl_job_bnb(&j)); /* no --kbit-upcast, --quant-head or plain constants */
	struct mdl_launches t, n;
	mdl_job_launches(&a, &j, 1, &t);
	double saved = mdl_act_layer_saved(&a, &j, 1, false);

	j.quant = MDL_QUANT_NF4;
	mdl_job_weight_passes(&a, &j, &b);
	mdl_job_launches(&a, &j, 1, &n);
	CU_ASSERT_DOUBLE_EQUAL(t.fwd - n.fwd, 7 * 12, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(t.bwd - n.bwd, 7 * 12, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 45088768.0 * 2, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), saved, 1e-3);

	j.quant = MDL_QUANT_NF4_TORCHAO;
	j.compile = true;
	mdl_job_weight_passes(&a, &j, &d);
	CU_ASSERT_DOUBLE_EQUAL(d.fwd, b.fwd, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 45088768.0 * 2, 1e-3);
	/* GPTQ keeps its fp16 weights as items; eagerly the shift's int32 and its int8 cast are
	 * held beside them (5 B a weight), compiled nothing */
	j.quant = MDL_QUANT_GPTQ;
	CU_ASSERT_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 0);
	j.compile = false;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 45088768.0 * 5, 1e-3);
	j.method = MDL_LORA;
	CU_ASSERT_EQUAL(mdl_job_weight_live(&a, &j, 1, false), 0);
}

/* Transformer Engine's FP8 casts for Llama-3.1-8B's layer: 4 B per element (2 read, 1 FP8
 * written, 1 FP8 transpose written) of each linear's input in forward (q, k, v, o, gate, up take
 * 4096 features, down 14336: 38,912 per token), of its output gradient in backward (4096 + 1024 +
 * 1024 + 4096 + 2 x 14336 + 4096 = 43,008) and of its weights (218,103,808); a frozen weight's
 * input 3 B; nothing in bf16. */
static void fp8_casts_follow_transformer_engine(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_FP8, .optimizer = MDL_ADAMW};
	struct mdl_fp8_casts c;

	mdl_job_fp8_casts(&a, &j, &c);
	CU_ASSERT_DOUBLE_EQUAL(c.fwd_per_token, 4.0 * 38912, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.bwd_per_token, 4.0 * 43008, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.weights, 4.0 * 218103808, 1);
	CU_ASSERT_DOUBLE_EQUAL(c.experts, 0, 1e-9);
	/* a LoRA base's weights are frozen: its inputs are cast without the transpose only the
	 * weight gradient reads, 3 B an element; the output gradients and weights as before */
	j.method = MDL_LORA;
	mdl_job_fp8_casts(&a, &j, &c);
	CU_ASSERT_DOUBLE_EQUAL(c.fwd_per_token, 3.0 * 38912, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.bwd_per_token, 4.0 * 43008, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.weights, 4.0 * 218103808, 1);
	j.method = MDL_FULL;
	j.precision = MDL_BF16_MIXED;
	mdl_job_fp8_casts(&a, &j, &c);
	CU_ASSERT(c.fwd_per_token == 0 && c.bwd_per_token == 0 && c.weights == 0);
	/* Mixtral-8x7B's layer: its 8 experts' three 4096 x 14336 matrices are the experts' part of
	 * the weights' casts (a GPU casts those it holds), the attention and router the rest */
	a = load("mixtral-8x7b-v0.1.json");
	j.precision = MDL_FP8;
	mdl_job_fp8_casts(&a, &j, &c);
	CU_ASSERT_DOUBLE_EQUAL(c.experts, 4.0 * 8 * 3 * 4096.0 * 14336, 1);
	CU_ASSERT(c.weights > c.experts);
}

/* GPT layer with dropout, eager attention: s b h (34 + 5 a s / h) (Korthikanti et al. 2022) */
static void gpt_layer_saves_korthikanti_bytes(void)
{
	struct mdl_arch a = load("gpt3-175b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			    .recompute = MDL_RC_NONE, .attention = MDL_ATTN_EAGER, .seq = 2048,
			    .micro_batch = 1};
	double s = 2048, b = 1, h = (double)a.hidden, an = (double)a.heads;

	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false),
			       s * b * h * (34 + 5 * an * s / h), 1);
	/* tensor parallel t = 8: s b h (10 + 24/t + 5 a s / (h t)) */
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 8, false),
			       s * b * h * (10 + 24.0 / 8 + 5 * an * s / (h * 8)), 1);
	/* + sequence parallel: everything / t */
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 8, true),
			       s * b * h / 8 * (34 + 5 * an * s / h), 1);
	/* selective recompute drops the attention core: 34 s b h */
	j.recompute = MDL_RC_SELECTIVE;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), 34 * s * b * h, 1);
	/* full recompute keeps the layer input: 2 s b h */
	j.recompute = MDL_RC_FULL;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), 2 * s * b * h, 1);
}

/* A full bf16-mixed fine-tune of one 4,096-token sequence with flash attention, no recompute. */
static struct mdl_job flash_job(void)
{
	return (struct mdl_job){.method = MDL_FULL, .precision = MDL_BF16_MIXED,
				.recompute = MDL_RC_NONE, .attention = MDL_ATTN_FLASH, .seq = 4096,
				.micro_batch = 1};
}

/*
 * Megatron-Core's recompute_modules under --recompute selective, solved by hand for a full
 * bf16-mixed fine-tune of one 4,096-token sequence (s) with flash attention, one GPU. What
 * each module drops beside the attention core (core_attn, the default):
 *   Qwen3-30B-A3B (hidden 2,048, every layer MoE, 8 of 128 experts of width 768): layernorm its
 *   pre-MLP norm's output, 2 B x s x 2,048 = 16,777,216 B; moe_act the experts' activation
 *   output, 2 B x s x 8 x 768 = 50,331,648 B; neither any matmul;
 *   Llama-3.1-8B (hidden 4,096, MLP width I = 14,336, gated, the activation unfused): mlp the
 *   fused norm's output 2 s h and the MLP's gate, activation, up and product, 8 s I: 503,316,480
 *   B, and its three projections again, 2 x s x 3 x 4,096 x 14,336 = 1,443,109,011,456 FLOPs;
 *   layernorm nothing (both its norms are fused into the linears after them);
 *   DeepSeek-V2-Lite (MLA, 16 heads, keys 128 + 64 rotary wide, values 128, no query latent):
 *   mla_up_proj the up-projected keys and values, 2 B x s x 16 x (192 + 128) = 41,943,040 B,
 *   made again by kv_b_proj's 512 x 16 x 256 weights: 2 x s x 2,097,152 = 17,179,869,184
 *   FLOPs (its queries come from q_proj, not a latent: kept).
 */
static void recompute_modules_drop_what_megatron_discards(void)
{
	struct mdl_job j = flash_job();
	struct mdl_flops f0, f1;
	j.recompute = MDL_RC_SELECTIVE;
	j.grouped_experts = true;
	struct mdl_arch q = load("qwen3-30b-a3b.json");
	double core = mdl_act_layer_saved(&q, &j, 1, false);
	mdl_job_flops(&q, &j, &f0);
	j.recompute_modules = MDL_RM_CORE_ATTN | MDL_RM_LAYERNORM;
	CU_ASSERT_DOUBLE_EQUAL(core - mdl_act_layer_saved(&q, &j, 1, false), 16777216.0, 1);
	j.recompute_modules = MDL_RM_CORE_ATTN | MDL_RM_MOE_ACT;
	CU_ASSERT_DOUBLE_EQUAL(core - mdl_act_layer_saved(&q, &j, 1, false), 50331648.0, 1);
	mdl_job_flops(&q, &j, &f1);
	CU_ASSERT_DOUBLE_EQUAL(f1.layer_recompute, f0.layer_recompute, 1);
	j.recompute_modules = MDL_RM_MOE_ACT; /* without the core: none of its recompute */
	mdl_job_flops(&q, &j, &f1);
	CU_ASSERT_DOUBLE_EQUAL(f1.layer_recompute, 0, 1);

	j = flash_job();
	j.recompute = MDL_RC_SELECTIVE;
	struct mdl_arch l = load("llama-3.1-8b.json");
	core = mdl_act_layer_saved(&l, &j, 1, false);
	mdl_job_flops(&l, &j, &f0);
	j.recompute_modules = MDL_RM_CORE_ATTN | MDL_RM_LAYERNORM;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&l, &j, 1, false), core, 1);
	j.recompute_modules = MDL_RM_CORE_ATTN | MDL_RM_MLP;
	CU_ASSERT_DOUBLE_EQUAL(core - mdl_act_layer_saved(&l, &j, 1, false), 503316480.0, 1);
	mdl_job_flops(&l, &j, &f1);
	CU_ASSERT_DOUBLE_EQUAL(f1.layer_recompute - f0.layer_recompute, 1443109011456.0, 1);

	j = flash_job();
	j.recompute = MDL_RC_SELECTIVE;
	struct mdl_arch d = load("deepseek-v2-lite.json");
	CU_ASSERT_EQUAL(d.heads * d.head_dim, 16 * 192);
	core = mdl_act_layer_saved(&d, &j, 1, false);
	mdl_job_flops(&d, &j, &f0);
	j.recompute_modules = MDL_RM_CORE_ATTN | MDL_RM_MLA_UP;
	CU_ASSERT_DOUBLE_EQUAL(core - mdl_act_layer_saved(&d, &j, 1, false), 41943040.0, 1);
	mdl_job_flops(&d, &j, &f1);
	CU_ASSERT_DOUBLE_EQUAL(f1.layer_recompute - f0.layer_recompute, 17179869184.0, 1);
	/* and only under selective: full recompute keeps its own */
	j.recompute = MDL_RC_FULL;
	CU_ASSERT_EQUAL(mdl_job_rc_modules(&j), 0);
}

static void flash_attention_removes_the_quadratic_term(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = flash_job();
	double f1 = mdl_act_layer_saved(&a, &j, 1, false);
	j.seq = 8192;
	double f2 = mdl_act_layer_saved(&a, &j, 1, false);
	j.attention = MDL_ATTN_EAGER;
	double e2 = mdl_act_layer_saved(&a, &j, 1, false);
	CU_ASSERT_DOUBLE_EQUAL(f2, 2 * f1, 1);          /* linear in s */
	CU_ASSERT(e2 - f2 > 0.99 * 2.0 * a.heads * 8192.0 * 8192.0); /* eager keeps the s^2 softmax */
}

/* Recomputed half by half, a Llama-3.1-8B layer at 2048 tokens holds its MLP half (the norm's
 * and the MLP's inputs, s b h each, and the gate, activation, up and down inputs, s b I each,
 * bf16) plus the attention half's input checkpoint: 2048 x 2 x (2 x 4096 + 4 x 14336) +
 * 2048 x 4096 x 2 = 285,212,672 bytes, against the whole layer's list. */
static void half_layers_hold_the_larger_half(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			    .recompute = MDL_RC_FULL, .attention = MDL_ATTN_FLASH, .seq = 2048,
			    .micro_batch = 1};
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_half_working(&a, &j, 1, false), 285212672.0, 1);
	CU_ASSERT(mdl_act_layer_working(&a, &j, 1, false) > 285212672.0 + 50e6);
	struct mdl_flops f;
	mdl_job_flops(&a, &j, &f);
	/* the attention half's forward: q, k, v, o projections (2 x 4096 x 128 x (2 x 32 + 2 x 8))
	 * and half the causal core */
	double proj = 2.0 * 2048 * 4096 * 128 * (2 * 32 + 2 * 8);
	double core = 0.5 * 4.0 * 2048 * 2048 * 4096;
	CU_ASSERT_DOUBLE_EQUAL(f.attn_half_fwd_exec, proj + core, 1);
}

static void logits_and_fp32_loss_are_counted(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED, .seq = 2048,
			    .micro_batch = 2};
	double sbv = 2048.0 * 2 * (double)a.vocab, sbh = 2048.0 * 2 * (double)a.hidden;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), 2 * sbv + 4 * sbv + 4 * sbh, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), 8 * sbv, 1);
	/* compiled: the loss's input and one fp32 log-sum-exp per token (4096 of them) are kept,
	 * the input being torchtune's fp32 logits (the model upcasts them unchunked), whose
	 * gradient the backward writes in fp32 and casts to bf16; with torchtune's chunked
	 * output, bf16 chunks, one of its 8 at a time */
	j.compile = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), 4 * sbv + 4 * 4096.0 + 4 * sbh, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), (4 + 2) * sbv, 1);
	j.loss = MDL_LOSS_CHUNKED_OUTPUT;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), 2 * sbv + 4 * 4096.0 + 4 * sbh, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), 2 * sbv / 8, 1);
	/* flash-attn's fused cross-entropy, compiled or not: the bf16 logits and a fp32
	 * log-sum-exp per token (4096) kept, a bf16 gradient of their shape in backward; split by a
	 * vocab-parallel head (tp 4) but for the log-sum-exp */
	j.loss = MDL_LOSS_FUSED;
	for (int c = 0; c < 2; c++) {
		j.compile = c;
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false),
				       2 * sbv + 4 * 4096.0 + 4 * sbh, 1);
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), 2 * sbv, 1);
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 4, false),
				       2 * sbv / 4 + 4 * 4096.0 + 4 * sbh, 1);
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 4, 1), 2 * sbv / 4, 1);
	}
	/* fms-acceleration's fast_loss behind transformers' loss function: the bf16 logits, the
	 * fp32 copy of the shifted ones Unsloth's kernel keeps and a fp32 log-sum-exp per token;
	 * in backward the kernel overwrites the copy, and the shift's backward fills a fp32 zero
	 * gradient of the logits' shape: 4 B a logit, 4 fewer than the full loss's spike */
	j.loss = MDL_LOSS_FUSED_FP32;
	j.compile = false;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), (2 + 4) * sbv + 4 * 4096.0 + 4 * sbh,
			       1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), 4 * sbv, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 4, false),
			       (2 + 4) * sbv / 4 + 4 * 4096.0 + 4 * sbh, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 4, 1), 4 * sbv / 4, 1);
	/* Megatron-Core's vocab-parallel cross-entropy, fused or not, compiled or not: the fp32
	 * softmax kept and the bf16 logits alive beside it until the forward returns (6 B a
	 * logit, as the full loss), then turned into the gradient in place and cast to bf16 where
	 * the logits were: nothing more in backward, where the full loss adds 8 B a logit; a
	 * vocab-parallel head of 4 splits both; fp32 logits are cast to nothing (4 B a logit) */
	enum mdl_loss megatron[] = {MDL_LOSS_VOCAB_PARALLEL, MDL_LOSS_VOCAB_PARALLEL_FUSED,
				    MDL_LOSS_VOCAB_PARALLEL_TE};
	for (int i = 0; i < 6; i++) {
		j.loss = megatron[i % 3];
		j.compile = i / 3;
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), (2 + 4) * sbv + 4 * sbh, 1);
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), 0, 1);
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 4, false),
				       (2 + 4) * sbv / 4 + 4 * sbh, 1);
	}
	/* Transformer Engine's kernel before 2.18 writes the gradient over the bf16 logits and
	 * keeps them: 2 B a logit */
	j.compile = false;
	j.loss = MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), 2 * sbv + 4 * sbh, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), 0, 1);
	j.loss = MDL_LOSS_VOCAB_PARALLEL_TE;
	j.precision = MDL_FP32;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), 4 * sbv + 8 * sbh, 1);
}

/* Transformers before 4.46 cast lm_head's output to fp32 in the model, freeing the bf16 logits
 * at the cast: by hand at 2 x 2,048 tokens of Llama-3.1-8B (128,256 logits a token), the full
 * loss keeps 4 B a logit (its fp32 log-probabilities) where 4.46 and later hold 6, 1,050,673,152
 * B less, and fused-fp32 the same 2 B a logit less; its backward's gradients are the same. In an
 * fp32 model the cast copies nothing: no change. The other losses never take the cast. */
static void logits_cast_in_the_model_free_the_bf16_ones(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED, .seq = 2048,
			    .micro_batch = 2};
	double sbv = 2048.0 * 2 * 128256, sbh = 2048.0 * 2 * 4096;
	enum mdl_loss cast[] = {MDL_LOSS_FULL, MDL_LOSS_FUSED_FP32};
	for (int i = 0; i < 2; i++) {
		j.loss = cast[i];
		j.upcast_in_model = false;
		double late = mdl_act_head(&a, &j, 1, false);
		double bwd = mdl_act_head_backward(&a, &j, 1, 1);
		j.upcast_in_model = true;
		CU_ASSERT_DOUBLE_EQUAL(late - mdl_act_head(&a, &j, 1, false), 1050673152.0, 1);
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false),
				       4 * sbv + 4 * sbh + (i ? 4 * 4096.0 : 0), 1);
		CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_backward(&a, &j, 1, 1), bwd, 1);
	}
	j.precision = MDL_FP32;
	double fp32 = mdl_act_head(&a, &j, 1, false);
	j.upcast_in_model = false;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), fp32, 1);
	j.precision = MDL_BF16_MIXED;
	j.loss = MDL_LOSS_FUSED;
	double fused = mdl_act_head(&a, &j, 1, false);
	j.upcast_in_model = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head(&a, &j, 1, false), fused, 1);
}

/* What a fused GPU optimizer step moves per parameter, by hand: AdamW in bf16-mixed reads the
 * fp32 master, m and v and the bf16 gradient and writes them back with the bf16 copy, 12 + 12 +
 * 2 + 2 = 28 B; with Megatron's fp32 main gradients 30; in fp32 8 + 8 + 4 + 8 = 28; in pure bf16,
 * whose states torch.optim keeps in bf16, 4 + 4 + 2 + 4 = 14; 8-bit AdamW in pure bf16 two
 * 1-byte states and an fp32 absmax per 256 both ways, 2 x 2.03125 + 2 + 4 = 10.0625; fp32 LoRA
 * adapters on a bf16 base as fp32, 28; a master remainder (2 B) reads and writes the bf16
 * weights too: 2 x 10 + 2 + 4 = 26. */
static void optimizer_step_bytes_follow_the_dtypes(void)
{
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			    .optimizer = MDL_ADAMW};
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 28, 1e-9);
	j.grad_dtype = MDL_GRAD_FP32;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 30, 1e-9);
	j.grad_dtype = MDL_GRAD_PARAM;
	j.master = MDL_MASTER_REMAINDER;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 26, 1e-9);
	j.master = MDL_MASTER_FP32;
	j.precision = MDL_FP32;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 28, 1e-9);
	j.precision = MDL_BF16;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 14, 1e-9);
	j.optimizer = MDL_ADAMW8BIT;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 10.0625, 1e-9);
	j.optimizer = MDL_ADAMW;
	j.method = MDL_LORA;
	j.lora_rank = 16;
	j.lora_targets = MDL_T_Q | MDL_T_V;
	j.lora_fp32 = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 28, 1e-9);
	j.lora_fp32 = false;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_update_bytes(&j), 14, 1e-9);
}

/* A full recompute that stops early (PyTorch's non-reentrant checkpoint since 2.1) leaves out
 * each layer's down projection, whose output only the residual add reads: by hand for
 * Llama-3.1-8B at 4,096 tokens, 2 x 4,096 x 4,096 x 14,336 = 481,036,337,152 FLOPs less a layer,
 * its GEMM's launch and the add's; the same for LoRA on q and v (the frozen down projection
 * saves its weight before it runs), nothing where PEFT adapts the down projection (the
 * adapter's input is saved after the base has run), nor under selective recompute, nor for
 * Gemma 2 (the norm after the MLP saves its input), nor for Mixtral's routed experts. */
static void early_stop_leaves_out_the_down_projection(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED, .seq = 4096,
			    .micro_batch = 1, .recompute = MDL_RC_FULL};
	struct mdl_flops whole, early;
	struct mdl_launches kw, ke;
	double layers;
	mdl_job_flops(&a, &j, &whole);
	mdl_job_launches(&a, &j, 1, &kw);
	CU_ASSERT_DOUBLE_EQUAL(whole.layer_recompute, whole.layer_fwd, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_early_stop(&a, &j, &layers), 0, 0);
	j.recompute_early_stop = true;
	mdl_job_flops(&a, &j, &early);
	mdl_job_launches(&a, &j, 1, &ke);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_early_stop(&a, &j, &layers), 4096.0 * 14336, 0);
	CU_ASSERT_DOUBLE_EQUAL(layers, 1, 0);
	CU_ASSERT_DOUBLE_EQUAL(whole.layer_recompute - early.layer_recompute, 481036337152.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(whole.layer_recompute_exec - early.layer_recompute_exec,
			       481036337152.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(early.layer_fwd, whole.layer_fwd, 1);
	CU_ASSERT_DOUBLE_EQUAL(early.layer_bwd, whole.layer_bwd, 1);
	CU_ASSERT_DOUBLE_EQUAL(kw.mm_recompute - ke.mm_recompute, 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(kw.recompute - ke.recompute, 2, 1e-9);
	j.method = MDL_LORA;
	j.lora_rank = 16;
	j.lora_targets = MDL_T_Q | MDL_T_V;
	mdl_job_flops(&a, &j, &early);
	CU_ASSERT_DOUBLE_EQUAL(early.layer_fwd - early.layer_recompute, 481036337152.0, 1);
	j.lora_targets |= MDL_T_DOWN;
	mdl_job_flops(&a, &j, &early);
	CU_ASSERT_DOUBLE_EQUAL(early.layer_recompute, early.layer_fwd, 1);
	j.method = MDL_FULL;
	j.recompute = MDL_RC_SELECTIVE;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_early_stop(&a, &j, &layers), 0, 0);
	j.recompute = MDL_RC_FULL;
	a = load("gemma-2-9b.json");
	CU_ASSERT_FATAL(a.norms_per_layer == 4);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_early_stop(&a, &j, &layers), 0, 0);
	a = load("mixtral-8x7b-v0.1.json");
	CU_ASSERT_FATAL(a.experts == 8);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_early_stop(&a, &j, &layers), 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(layers, 0, 0);
}

/* The MLP's activation gradients a layer's backward holds, by hand at 4,096 tokens in bf16:
 * Llama-3.1-8B's gated MLP (14,336 wide), the product's output gradient and its two factors':
 * 3 x 14,336 x 2 B x 4,096 = 352,321,536 B, half of it on each of 2 TP ranks, twice it with an
 * fp32 stream; Mixtral's experts (top 2 of 8, each 14,336 wide) looped one at a time hold one
 * expert's 1,024 tokens' (4,096 x 2 / 8): 88,080,384 B, grouped all 8,192 routed ones':
 * 704,643,072 B; OPT-1.3B's ReLU MLP (8,192 wide, no gate) the second linear's input gradient
 * and the activation's: 2 x 8,192 x 2 B x 4,096 = 134,217,728 B. */
static void mlp_gradients_stand_beside_the_saved_tensors(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED, .seq = 4096,
			    .micro_batch = 1};
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_grads(&a, &j, 1), 352321536.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_grads(&a, &j, 2), 352321536.0 / 2, 1);
	j.precision = MDL_FP32;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_grads(&a, &j, 1), 2 * 352321536.0, 1);
	j.precision = MDL_BF16_MIXED;
	a = load("mixtral-8x7b-v0.1.json");
	CU_ASSERT_FATAL(a.experts == 8 && a.experts_per_tok == 2);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_grads(&a, &j, 1), 88080384.0, 1);
	j.grouped_experts = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_grads(&a, &j, 1), 704643072.0, 1);
	j.grouped_experts = false;
	a = load("opt-1.3b.json");
	CU_ASSERT_FATAL(!a.gated_mlp && a.intermediate == 8192);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_grads(&a, &j, 1), 134217728.0, 1);
}

static void model_flops_follow_megatron_convention(void)
{
	struct mdl_arch a = load("llama-3.1-70b.json");
	struct mdl_counts c;
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			    .recompute = MDL_RC_NONE, .seq = 4096, .micro_batch = 1};

	mdl_arch_counts(&a, &c);
	double norms = 2.0 * 8192 * 80 + 8192; /* RMSNorm weights are not matmuls */
	double tokens = 4096, fwd = 2 * tokens * ((double)(c.params - c.embed_params) - norms) +
				   4.0 * 4096 * 4096 * 8192 * 80;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_forward_flops(&a, &j), fwd, fwd * 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_model_flops(&a, &j), 3 * fwd, fwd * 1e-12);
	j.recompute = MDL_RC_FULL; /* recompute is hardware work, not model work */
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_model_flops(&a, &j), 3 * fwd, fwd * 1e-12);
	/* full recompute reruns the decoder layers' forward, not the lm_head (Megatron checkpoints
	 * transformer layers only): + fwd - head */
	double head = 2 * tokens * 128256.0 * 8192;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_hardware_flops(&a, &j), 4 * fwd - head, fwd * 1e-12);
	/* executed: causal flash attention runs half of the 4 b s^2 h attention FLOPs, in the
	 * forward, the backward (2x, and the scores again: 2.5x) and the recomputed forward; eager
	 * runs all of them, its backward twice the forward */
	double attn = 4.0 * 4096 * 4096 * 8192 * 80;
	j.attention = MDL_ATTN_FLASH;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_executed_flops(&a, &j),
			       4 * fwd - head - 0.5 * 4 * attn + 0.5 * 0.5 * attn, fwd * 1e-12);
	j.attention = MDL_ATTN_EAGER;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_executed_flops(&a, &j), 4 * fwd - head, fwd * 1e-12);
	/* LoRA: frozen weights get no weight gradient */
	j.recompute = MDL_RC_NONE;
	j.method = MDL_LORA;
	j.lora_rank = 8;
	j.lora_targets = MDL_T_ALL;
	CU_ASSERT(mdl_job_model_flops(&a, &j) < 2.5 * fwd);
}

/* torchtitan's op-level SAC on Llama-3.1-8B: of q, k, v, o, gate, up, down (in that order) it
 * keeps the outputs of q, v, gate and down, plus the layer input and the flash kernel's output
 * and fp32 log-sum-exp: 2 sb (4096 + 4096 + 1024 + 14336 + 4096 + 4096) + 4 sb 32 bytes; it
 * recomputes k, o and up: 4096 x (1024 + 4096 + 14336) parameters, 2 FLOPs each per token.
 * Under TP 8 without SP the column-parallel outputs split eightfold, the input and down's
 * output do not. */
static void op_sac_keeps_every_other_matmul(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_FULL, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_OP,
			    MDL_ATTN_FLASH, 4096, 2};
	double sb = 4096.0 * 2;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false),
			       sb * (2.0 * 31744 + 4.0 * 32), 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 8, false),
			       sb * (2.0 * (4096 + 4096) + 2.0 * (4096 + 1024 + 14336 + 4096) / 8 +
				     4.0 * 32 / 8),
			       1);
	struct mdl_flops f;
	mdl_job_flops(&a, &j, &f);
	CU_ASSERT_DOUBLE_EQUAL(f.layer_recompute, 2.0 * sb * 4096.0 * (1024 + 4096 + 14336), 1);
	CU_ASSERT_DOUBLE_EQUAL(f.layer_recompute_exec, f.layer_recompute, 1);
	/* between none and full, as the modes' names promise */
	j.recompute = MDL_RC_FULL;
	double full = mdl_act_layer_saved(&a, &j, 1, false);
	j.recompute = MDL_RC_NONE;
	double none = mdl_act_layer_saved(&a, &j, 1, false);
	CU_ASSERT(full < sb * 63616 && sb * 63616 < none);
}

/* PEFT's lora_dropout > 0 runs each adapter's lora_A on a dropped copy of its input: per layer of
 * Llama-3.1-8B with every projection adapted, the inputs of q, k, v (hidden each), o (the
 * attention width, 4096), gate, up (hidden) and down (14336), in bf16 plus a 1-byte mask. The
 * inputs themselves are then kept by nothing but what else reads them: the attention kernel
 * keeps o's (its output); q/k/v's, gate/up's (hidden each) and down's (14336) go, 2 bytes.
 * One adapter on a fused q/k/v projection (LitGPT's LoRAQKVLinear) drops its input once: two
 * fewer copies of the hidden-wide input, 3 bytes each. */
static void lora_dropout_keeps_the_dropped_inputs(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_LORA, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	double none = mdl_act_layer_saved(&a, &j, 1, false);
	j.lora_dropout = 0.1;
	double split = mdl_act_layer_saved(&a, &j, 1, false);
	CU_ASSERT_DOUBLE_EQUAL(split - none,
			       3.0 * 2048 * (3 * 4096 + 4096 + 2 * 4096 + 14336) -
				       2.0 * 2048 * (4096 + 4096 + 14336),
			       1);
	j.fused_qkv = true;
	double fused = mdl_act_layer_saved(&a, &j, 1, false);
	j.lora_dropout = 0;
	CU_ASSERT_DOUBLE_EQUAL(fused - mdl_act_layer_saved(&a, &j, 1, false),
			       split - none - 2 * 3.0 * 2048 * 4096, 1);
}

/* A frozen linear keeps nothing of its input (autograd saves mm's mat1 for the weight's gradient
 * only); what else reads it may. Llama-3.1-8B, 2048 tokens, LoRA r 8 on q and v alone, against
 * the full fine-tune's layer: q's adapter keeps the attention input, the attention kernel o's,
 * and gate/up's (4096) and down's (14336) inputs go, 2 bytes each; the adapters' x A (r 8, q and
 * v) come in. bitsandbytes before 0.43.2 (nf4-legacy) kept every 4-bit linear's input, on its
 * autograd ctx, which the graph holds past backward and a non-reentrant checkpoint does not
 * drop; 0.43.2 and later keep none, as LoRA's frozen bf16 linears. Eager attention keeps its
 * output no more: o's input (4096) goes too. */
static void frozen_linears_keep_no_input(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_FULL, 8, MDL_T_Q | MDL_T_V, MDL_BF16_MIXED, MDL_ADAMW,
			    MDL_RC_NONE, MDL_ATTN_FLASH, 2048, 1};
	double sb = 2048, full = mdl_act_layer_saved(&a, &j, 1, false);
	double adapters = 2.0 * sb * 8 * 2;
	j.method = MDL_LORA;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false) - full,
			       adapters - 2.0 * sb * (4096 + 14336), 1);
	j.method = MDL_QLORA;
	j.quant = MDL_QUANT_NF4;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false) - full,
			       adapters - 2.0 * sb * (4096 + 14336), 1);
	j.quant = MDL_QUANT_NF4_LEGACY;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false) - full, adapters, 1);
	/* MatMul4Bit keeps each input on its ctx, which the graph holds past backward
	 * (mdl_act_layer_held): the attention's and the MLP's inputs (4096 each), o's (4096) and
	 * down's (14336), whoever else keeps them; a 4-bit head its input; none in 0.43.2's
	 * inputs, under full recompute, or for an unquantised head */
	double held = 2.0 * sb * (3 * 4096 + 14336);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_held(&a, &j, 1, false), held, 1);
	j.recompute = MDL_RC_SELECTIVE;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_held(&a, &j, 1, false), held, 1);
	/* full recompute: a reentrant checkpoint keeps its input alone; a non-reentrant one
	 * (--checkpoint-early-stop yes) lets the ctx's inputs escape, kept beside it */
	j.recompute = MDL_RC_FULL;
	CU_ASSERT_EQUAL(mdl_act_layer_held(&a, &j, 1, false), 0);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), 2.0 * sb * 4096, 1);
	j.recompute_early_stop = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_held(&a, &j, 1, false), held, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), 2.0 * sb * 4096 + held, 1);
	j.recompute_early_stop = false;
	j.recompute = MDL_RC_NONE;
	CU_ASSERT_EQUAL(mdl_act_head_held(&a, &j, 1, false), 0);
	j.quant_head = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_held(&a, &j, 1, false), 2.0 * sb * 4096, 1);
	j.quant_head = false;
	j.quant = MDL_QUANT_NF4;
	CU_ASSERT_EQUAL(mdl_act_layer_held(&a, &j, 1, false), 0);
	j.quant = MDL_QUANT_NF4_LEGACY;
	/* Unsloth's fused functions run every adapted linear without MatMul4Bit: nothing held */
	j.lora_targets = MDL_T_ALL;
	j.fused_lora = true;
	CU_ASSERT_EQUAL(mdl_act_layer_held(&a, &j, 1, false), 0);
	j.fused_lora = false;
	j.lora_targets = MDL_T_Q | MDL_T_V;
	/* eager RMSNorms: the frozen weight's product keeps not the normalised value (hidden, 2
	 * bytes, two norms), the fp32 input stays */
	j.eager_ops = true;
	j.method = MDL_FULL;
	full = mdl_act_layer_saved(&a, &j, 1, false);
	j.method = MDL_LORA;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false) - full,
			       adapters - 2.0 * sb * (4096 + 14336) - 2.0 * sb * 4096 * 2, 1);
	j.eager_ops = false;
	/* eager attention keeps its softmax (s^2 a heads) where flash keeps its log-sum-exp */
	j.method = MDL_FULL;
	j.attention = MDL_ATTN_EAGER;
	full = mdl_act_layer_saved(&a, &j, 1, false);
	j.method = MDL_LORA;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false) - full,
			       adapters - 2.0 * sb * (4096 + 4096 + 14336), 1);
}

/* The logits a loop keeping the model's outputs holds past backward (mdl_act_head_logits):
 * Llama-3.1-8B, 2 x 2,048 tokens, bf16, the full or chunked-output loss: 2 B x 4096 x 128256, split
 * by TP; none where the chunked loss's kernel returns none, the model casts them to fp32 itself,
 * or the compiled loss keeps its own. */
static void loop_holds_returned_logits(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_LORA, 8, MDL_T_Q | MDL_T_V, MDL_BF16_MIXED, MDL_ADAMW,
			    MDL_RC_FULL, MDL_ATTN_FLASH, 2048, 2};
	double logits = 2.0 * 4096 * 128256;
	j.loss = MDL_LOSS_FULL;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_logits(&a, &j, 1), logits, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_logits(&a, &j, 4), logits / 4, 1);
	j.loss = MDL_LOSS_CHUNKED_OUTPUT;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_head_logits(&a, &j, 1), logits, 1);
	j.loss = MDL_LOSS_CHUNKED;
	CU_ASSERT_EQUAL(mdl_act_head_logits(&a, &j, 1), 0);
	j.loss = MDL_LOSS_FULL;
	j.upcast_in_model = true;
	CU_ASSERT_EQUAL(mdl_act_head_logits(&a, &j, 1), 0);
	j.upcast_in_model = false;
	j.compile = true;
	CU_ASSERT_EQUAL(mdl_act_head_logits(&a, &j, 1), 0);
}

/* --kbit-upcast on Llama-3.1-8B's QLoRA base (32 layers, hidden 4096, MLP 14336, vocab 128256,
 * untied): all keeps the embedding, the head and the 65 norm weights (2 a layer and the final
 * one) in fp32, 2 bytes a parameter more each; norms the norm weights alone (Llama has no
 * biases). Neither touches the 4-bit linears or the adapters; GPTQ bases take none of it. */
static void kbit_upcast_keeps_unquantised_weights_in_fp32(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_QLORA, 8, MDL_T_Q | MDL_T_V, MDL_BF16_MIXED, MDL_ADAMW,
			    MDL_RC_FULL, MDL_ATTN_FLASH, 2048, 1};
	struct mdl_states none, norms, all;
	mdl_job_states(&a, &j, &none);
	j.upcast = MDL_UPCAST_NORMS;
	mdl_job_states(&a, &j, &norms);
	j.upcast = MDL_UPCAST_ALL;
	mdl_job_states(&a, &j, &all);
	double norm_params = (2.0 * 32 + 1) * 4096;
	CU_ASSERT_DOUBLE_EQUAL(norms.weights_bytes - none.weights_bytes, 2.0 * norm_params, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(all.weights_bytes - none.weights_bytes,
			       2.0 * (norm_params + 2.0 * 128256 * 4096), 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(all.optimizer_bytes, none.optimizer_bytes, 1e-3);
	j.quant = MDL_QUANT_GPTQ;
	CU_ASSERT_EQUAL(mdl_job_upcast(&j), MDL_UPCAST_NONE);
	j.quant = MDL_QUANT_NF4;
	j.method = MDL_LORA;
	CU_ASSERT_EQUAL(mdl_job_upcast(&j), MDL_UPCAST_NONE);
}

/* The fp32 stream an upcast norm hands a Llama layer: the checkpoint of a fully recomputed layer
 * is 4 bytes an element (2 s b h -> 4 s b h); without recompute, on q and v adapters without
 * dropout and fused norms, the two norms' inputs (hidden) and the MLP's gate, activation and up
 * outputs (14336 each) take 2 bytes an element more, the matmuls' compute-dtype inputs none;
 * and each adapter casts the fp32 input to its bf16 weights' dtype and keeps its own copy
 * (PEFT's x.to(lora_A.weight.dtype), per adapted projection), where the bf16 stream's q and v
 * adapters shared the one input: one copy of hidden more, 2 bytes an element.
 * Gemma's norms cast back to their input's dtype: norms alone changes nothing there, all (an
 * fp32 embedding's output) does. The casts around each 4-bit linear, per token: its input to
 * bf16 and its output back: 6 bytes an element over 4096 + 4096 (q), 4096 + 1024 (k),
 * 4096 + 1024 (v), 4096 + 4096 (o), 3 x (4096 + 14336) (gate, up, down) = 81920; backward
 * casts the gradients back (an adapter's own cast of its input is the adapter path's). */
static void kbit_upcast_streams_fp32(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_QLORA, 8, MDL_T_Q | MDL_T_V, MDL_BF16_MIXED, MDL_ADAMW,
			    MDL_RC_FULL, MDL_ATTN_FLASH, 2048, 1};
	double sb = 2048, sbh = sb * 4096;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), 2.0 * sbh, 1e-3);
	j.upcast = MDL_UPCAST_NORMS;
	CU_ASSERT_EQUAL(mdl_job_stream_bytes(&a, &j), 4);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), 4.0 * sbh, 1e-3);
	j.recompute = MDL_RC_NONE;
	double up = mdl_act_layer_saved(&a, &j, 1, false);
	j.upcast = MDL_UPCAST_NONE;
	CU_ASSERT_DOUBLE_EQUAL(up - mdl_act_layer_saved(&a, &j, 1, false),
			       2.0 * sb * (3.0 * 4096 + 3.0 * 14336), 1e-3);
	struct mdl_weight_passes d0, d1;
	mdl_job_weight_passes(&a, &j, &d0);
	j.upcast = MDL_UPCAST_NORMS;
	mdl_job_weight_passes(&a, &j, &d1);
	CU_ASSERT_DOUBLE_EQUAL(d1.fwd - d0.fwd, 6.0 * 81920 * sb, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(d1.bwd - d0.bwd, 6.0 * 81920 * sb, 1e-3);

	struct mdl_arch g = load("gemma-7b.json");
	CU_ASSERT_EQUAL(mdl_job_stream_bytes(&g, &j), 2);
	j.upcast = MDL_UPCAST_ALL;
	CU_ASSERT_EQUAL(mdl_job_stream_bytes(&g, &j), 4);
}

/* Eager attention's scores, Llama-3.1-8B full fine-tune at 2048 tokens (32 heads: s2 = 32 x
 * 2048^2 scores): Megatron's fused softmax keeps its bf16 output, which the bmm by the values
 * reads (2 s2, in place of flash's fp32 log-sum-exp, 4 x 2048 x 32); as PyTorch ops
 * (--pointwise eager: transformers) softmax keeps its fp32 result and the bmm the bf16 copy,
 * 4 s2 more. With attention dropout the bmm keeps dropout's output instead of the copy: the
 * mask (s2) and that output (2 s2) either way, the fp32 result 2 s2 more than Megatron's. */
static void eager_softmax_keeps_fp32_as_pytorch_ops(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_FULL, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	double s2 = 32.0 * 2048 * 2048, lse = 4.0 * 2048 * 32;
	double delta[2];
	for (int ops = 0; ops < 2; ops++) {
		j.eager_ops = ops;
		j.attention = MDL_ATTN_FLASH;
		double flash = mdl_act_layer_saved(&a, &j, 1, false);
		j.attention = MDL_ATTN_EAGER;
		delta[ops] = mdl_act_layer_saved(&a, &j, 1, false) - flash;
	}
	CU_ASSERT_DOUBLE_EQUAL(delta[0], 2.0 * s2 - lse, 1e-3);
	CU_ASSERT_DOUBLE_EQUAL(delta[1], 6.0 * s2 - lse, 1e-3);
	a.attn_dropout = 0.1;
	j.eager_ops = false;
	double megatron = mdl_act_layer_saved(&a, &j, 1, false);
	j.eager_ops = true;
	double ops = mdl_act_layer_saved(&a, &j, 1, false);
	j.attention = MDL_ATTN_FLASH;
	CU_ASSERT_DOUBLE_EQUAL(ops - mdl_act_layer_saved(&a, &j, 1, false), 7.0 * s2 - lse, 1e-3);
	j.eager_ops = false;
	CU_ASSERT_DOUBLE_EQUAL(megatron - mdl_act_layer_saved(&a, &j, 1, false), 5.0 * s2 - lse,
			       1e-3);
}

/* One fused q/k/v projection split into views: the rotary embedding copies q and k, and the
 * attention's saved v keeps the whole output, so its q and k parts stay beside the copies.
 * Phi-3-mini (32 heads of 96, as many key-value heads: q and k 3072 each) fuses in Hugging
 * Face's Phi3Attention, Llama does not; at 2048 tokens and TP 2, 2 x 2048 x (3072 + 3072) / 2
 * bytes more. Without rotary (GPT-2's c_attn) q, k and v are the output itself: nothing more. */
static void fused_qkv_keeps_the_whole_projection(void)
{
	struct mdl_arch phi = load("phi-3-mini-4k.json"), llama = load("llama-3.1-8b.json");
	struct mdl_arch gpt = load("gpt3-175b.json");
	CU_ASSERT(phi.fused_qkv && !llama.fused_qkv && !gpt.fused_qkv);
	CU_ASSERT(load("pythia-6.9b.json").fused_qkv && load("qwen-7b.json").fused_qkv);
	struct mdl_job j = {MDL_FULL, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	double split = mdl_act_layer_saved(&phi, &j, 2, false);
	j.fused_qkv = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&phi, &j, 2, false) - split,
			       2.0 * 2048 * (3072 + 3072) / 2, 1);
	/* its traffic is the projection's and the copies', already counted */
	double saved;
	double moved = mdl_act_layer_moved(&phi, &j, 2, false, &saved);
	j.fused_qkv = false;
	double moved_split = mdl_act_layer_moved(&phi, &j, 2, false, &saved);
	CU_ASSERT_DOUBLE_EQUAL(moved, moved_split, 1);
	split = mdl_act_layer_saved(&gpt, &j, 1, false);
	j.fused_qkv = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&gpt, &j, 1, false), split, 1);
}

/* FP8 recipes on Llama-3.1-8B's layer (q, o 4,096^2; k, v 4,096 x 1,024; gate, up 4,096 x
 * 14,336; down 14,336 x 4,096: 38,912 input features, 43,008 output features, 218,103,808
 * weights). Transformer Engine: 4 bytes an element of each input (forward), output gradient
 * (backward) and weight. torchao: 5 (the amax read, the cast's read, a byte written) an input
 * element forward and again backward, 8 an output-gradient element (one amax, two casts), 5 a
 * weight element in forward and again in backward; and the linears keep their 16-bit inputs
 * (the full fine-tune's layer as in bf16) where TE keeps a byte. */
static void fp8_recipes_cast_and_keep(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_FULL, 8, MDL_T_ALL, MDL_FP8, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	struct mdl_fp8_casts c;
	mdl_job_fp8_casts(&a, &j, &c);
	CU_ASSERT_DOUBLE_EQUAL(c.fwd_per_token, 4.0 * 38912, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.bwd_per_token, 4.0 * 43008, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.weights, 4.0 * 218103808, 1);
	CU_ASSERT_DOUBLE_EQUAL(c.weights_bwd, 0, 1e-6);
	double te = mdl_act_layer_saved(&a, &j, 1, false);
	j.fp8_recipe = MDL_FP8_TORCHAO;
	mdl_job_fp8_casts(&a, &j, &c);
	CU_ASSERT_DOUBLE_EQUAL(c.fwd_per_token, 5.0 * 38912, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.bwd_per_token, 8.0 * 43008 + 5.0 * 38912, 1e-6);
	CU_ASSERT_DOUBLE_EQUAL(c.weights, 5.0 * 218103808, 1);
	CU_ASSERT_DOUBLE_EQUAL(c.weights_bwd, 5.0 * 218103808, 1);
	double ao = mdl_act_layer_saved(&a, &j, 1, false);
	j.precision = MDL_BF16_MIXED;
	CU_ASSERT_DOUBLE_EQUAL(ao, mdl_act_layer_saved(&a, &j, 1, false), 1);
	/* TE keeps a byte of each linear's input (qkv, o, mlp, down: 4,096 x 3 + 14,336) */
	CU_ASSERT_DOUBLE_EQUAL(ao - te, 2048.0 * (3 * 4096 + 14336), 1);
}

/* repeat_kv: grouped-query attention's keys and values copied to every query head and kept so.
 * Llama-3.1-8B (32 heads, 8 key-value heads of 128) at 2048 tokens: 2 x 2048 x 24 x 128 bytes
 * each for keys and values, 2 bytes an element; a multi-head model (Llama-2-7B) has nothing to
 * repeat; selective recompute drops the copies with the attention core. */
static void repeat_kv_keeps_every_head(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json"), mha = load("llama-2-7b.json");
	struct mdl_job j = {MDL_FULL, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	double base = mdl_act_layer_saved(&a, &j, 1, false);
	double base_mha = mdl_act_layer_saved(&mha, &j, 1, false);
	j.repeat_kv = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false) - base,
			       2.0 * (2.0 * 2048 * 24 * 128), 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&mha, &j, 1, false), base_mha, 1);
	/* ChatGLM's remote code expands its two key-value groups itself */
	struct mdl_arch glm = load("glm-4-9b.json");
	CU_ASSERT(glm.kv_repeated && !a.kv_repeated && !mha.kv_repeated);
	j.recompute = MDL_RC_SELECTIVE;
	double sel = mdl_act_layer_saved(&a, &j, 1, false);
	j.repeat_kv = false;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), sel, 1);
}

/* Baichuan 2's NormHead: the head's matmul keeps the normalised weight copy a micro-batch,
 * 125,696 x 4,096 x 2 bytes beside a plain head's saved tensors (full loss), a LoRA run's too;
 * the chunked loss keeps none. */
/* What the head keeps with an architecture flag on, less what it keeps with it off. */
static double head_with(struct mdl_arch *a, const struct mdl_job *j, bool *flag)
{
	bool was = *flag;
	*flag = true;
	double on = mdl_act_head(a, j, 1, false);
	*flag = false;
	double off = mdl_act_head(a, j, 1, false);
	*flag = was;
	return on - off;
}

static void norm_head_keeps_the_normalised_weight(void)
{
	struct mdl_arch a;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"baichuan\", "
					     "\"max_position_embeddings\": 4096}",
					     "t", &a, err, sizeof err),
			      0);
	struct mdl_job j = {MDL_LORA, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	CU_ASSERT_DOUBLE_EQUAL(head_with(&a, &j, &a.norm_head), 2.0 * 125696 * 4096, 1);
	j.loss = MDL_LOSS_CHUNKED;
	CU_ASSERT_DOUBLE_EQUAL(head_with(&a, &j, &a.norm_head), 0, 1);
}

/* Gemma 2's tanh soft-caps (Gemma2Config's defaults 50 and 30; Gemma 3's none, a config's null
 * none): the final cap keeps tanh's output, the logits' size (2048 tokens x 256000 in bf16),
 * except under the chunked loss, which caps inside its kernel; the attention cap, under eager
 * attention, one bf16 score tensor (16 heads x 2048^2 on gemma-2-9b) a layer. */
static void gemma2_softcaps_keep_tanh_outputs(void)
{
	struct mdl_arch a = load("gemma-2-9b.json"), g3 = load("gemma-3-1b.json");
	CU_ASSERT(a.attn_softcap && a.final_softcap);
	CU_ASSERT(!g3.attn_softcap && !g3.final_softcap);
	struct mdl_arch off;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"gemma2\", "
					     "\"final_logit_softcapping\": null}",
					     "t", &off, err, sizeof err),
			      0);
	CU_ASSERT(off.attn_softcap && !off.final_softcap);
	CU_ASSERT_EQUAL(mdl_arch_parse("{\"model_type\": \"gemma2\", "
				       "\"attn_logit_softcapping\": -1}",
				       "t", &off, err, sizeof err),
			-1);
	struct mdl_job j = {MDL_LORA, 8, MDL_T_ALL, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	CU_ASSERT_DOUBLE_EQUAL(head_with(&a, &j, &a.final_softcap), 2.0 * 2048 * 256000, 1);
	j.loss = MDL_LOSS_CHUNKED;
	CU_ASSERT_DOUBLE_EQUAL(head_with(&a, &j, &a.final_softcap), 0, 1);
	double flash = mdl_act_layer_saved(&a, &j, 1, false);
	j.attention = MDL_ATTN_EAGER;
	double capped = mdl_act_layer_saved(&a, &j, 1, false);
	a.attn_softcap = false;
	CU_ASSERT_DOUBLE_EQUAL(capped - mdl_act_layer_saved(&a, &j, 1, false),
			       2.0 * 16 * 2048.0 * 2048, 1);
	a.attn_softcap = true;
	j.attention = MDL_ATTN_FLASH;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), flash, 1);
}

/* torch.compile's partitioner recomputes only what fusible ops alone read in backward: it keeps
 * the norms' outputs and SwiGLU's product (a weight gradient's matmul reads them) and the
 * norms' fp32 rstd, and recomputes SiLU(gate): per layer of Llama-3.1-8B at 2048 tokens, one
 * bf16 intermediate fewer and two fp32 scalars per token more than the inventory's eager. */
static void compile_recomputes_only_what_fusible_ops_read(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_FULL, 0, 0, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	double eager = mdl_act_layer_saved(&a, &j, 1, false);
	j.compile = true;
	CU_ASSERT_DOUBLE_EQUAL(eager - mdl_act_layer_saved(&a, &j, 1, false),
			       2048.0 * (2 * 14336 - 2 * 4), 1);
}

/* Megatron-Core's fused SwiGLU keeps its input (gate and up) alone: Llama-3.1-8B at 2048
 * tokens keeps act(gate), 14336 wide in bf16, less a layer (2048 x 14336 x 2 B), under TP 2 half
 * of it; one kernel less in forward (silu and mul become one) */
static void fused_swiglu_keeps_its_input_alone(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_FULL, 0, 0, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	double eager = mdl_act_layer_saved(&a, &j, 1, false);
	double eager_tp = mdl_act_layer_saved(&a, &j, 2, true);
	struct mdl_launches k0, k1;
	mdl_job_launches(&a, &j, 1, &k0);
	j.fused_glu = true;
	CU_ASSERT_DOUBLE_EQUAL(eager - mdl_act_layer_saved(&a, &j, 1, false), 2048.0 * 14336 * 2,
			       1);
	CU_ASSERT_DOUBLE_EQUAL(eager_tp - mdl_act_layer_saved(&a, &j, 2, true), 2048.0 * 14336,
			       1);
	mdl_job_launches(&a, &j, 1, &k1);
	CU_ASSERT_DOUBLE_EQUAL(k0.fwd - k1.fwd, 1.0, 1e-12);
}

/* Documents of 512 tokens packed into Llama-3.1-70B's 4096-token sequences, each attending to
 * itself: the attention FLOPs the convention counts are s x 512 of the s^2 (an eighth), a
 * fused kernel executes half of those (each document's causal block), and an eager kernel
 * still computes the whole masked s^2 (with full recompute, as the test above). */
static void packed_documents_attend_apart(void)
{
	struct mdl_arch a = load("llama-3.1-70b.json");
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			    .recompute = MDL_RC_FULL, .attention = MDL_ATTN_FLASH, .seq = 4096,
			    .micro_batch = 1};
	double whole = mdl_job_forward_flops(&a, &j);
	double attn = 4.0 * 4096 * 4096 * 8192 * 80, attn_d = attn / 8;
	double head = 2 * 4096 * 128256.0 * 8192;
	j.doc_tokens = 512;
	double fwd = whole - attn + attn_d;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_forward_flops(&a, &j), fwd, fwd * 1e-12);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_executed_flops(&a, &j),
			       4 * fwd - head - 0.5 * 4 * attn_d + 0.5 * 0.5 * attn_d, fwd * 1e-12);
	j.attention = MDL_ATTN_EAGER;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_executed_flops(&a, &j), 4 * whole - head, fwd * 1e-12);
	/* one document as long as the sequence is no packing */
	j.doc_tokens = 4096;
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_forward_flops(&a, &j), whole, whole * 1e-12);
}

/* Transformer Engine's FP8 linears keep their inputs as FP8 copies: per layer of Llama-3.1-8B
 * at 2048 tokens, the QKV, output-projection and FC1 inputs (4096 each) and FC2's (14336) at 1
 * byte an element instead of 2, kept without recompute and with selective; what the kernels
 * move is the bf16 inventory's either way, and the recompute under selective moves the
 * attention core alone (the log-sum-exp, 32 heads x 4 B a token). */
static void te_fp8_keeps_linear_inputs_in_one_byte(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_FULL, 0, 0, MDL_BF16_MIXED, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	double bf16 = mdl_act_layer_saved(&a, &j, 1, false), saved;
	double moved = mdl_act_layer_moved(&a, &j, 1, false, &saved);
	CU_ASSERT_DOUBLE_EQUAL(saved, moved, 1);
	j.precision = MDL_FP8;
	double narrow = 2048.0 * (3 * 4096 + 14336);
	CU_ASSERT_DOUBLE_EQUAL(bf16 - mdl_act_layer_saved(&a, &j, 1, false), narrow, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_working(&a, &j, 1, false), bf16 - narrow, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_moved(&a, &j, 1, false, &saved), moved, 1);
	CU_ASSERT_DOUBLE_EQUAL(saved, moved, 1);
	j.recompute = MDL_RC_SELECTIVE;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_moved(&a, &j, 1, false, &saved) - saved,
			       2048.0 * 32 * 4, 1);
	/* full recompute keeps the bf16 layer input, as without FP8 */
	j.recompute = MDL_RC_FULL;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 1, false), 2.0 * 2048 * 4096, 1);
}

/* A full bf16 fine-tune of one 2,048-token sequence, no recompute, flash attention, eager. */
static struct mdl_job eager_job(void)
{
	return (struct mdl_job){.method = MDL_FULL, .precision = MDL_BF16_MIXED,
				.optimizer = MDL_ADAMW, .recompute = MDL_RC_NONE,
				.attention = MDL_ATTN_FLASH, .seq = 2048, .micro_batch = 1,
				.eager_ops = true};
}

/* Launches of Llama-3.1-8B's layer, counted by hand from modeling_llama.py: 7 linears, two
 * RMSNorms of 8 kernels, rotary 10, SDPA 1 + repeat_kv 2 (GQA 32/8) + contiguous 1, SiLU and
 * the gate's product 2, two residual adds = 41; LoRA on q and v adds A, B, scale, add each. */
static void launches_follow_the_eager_layer(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = eager_job();
	struct mdl_launches k;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 41, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.bwd, 82, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.recompute, 0, 1e-9);
	/* fused norms and rotary (Transformer Engine, apex, Liger): a kernel a norm, one each
	 * for q and k: 7 + 2 + 2 + 4 + 2 + 2 = 19 */
	j.eager_ops = false;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 19, 1e-9);
	j.eager_ops = true;
	/* matrix kernels: 7 GEMMs and the flash forward; 14 gradient GEMMs and the flash
	 * backward */
	CU_ASSERT_DOUBLE_EQUAL(k.mm_fwd, 8, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_bwd, 15, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_recompute, 0, 1e-9);
	/* per-op recompute runs again the matmuls whose outputs it does not keep: every other
	 * one of q, k, v, o, gate, up, down (k, o, up); selective the attention core */
	j.recompute = MDL_RC_OP;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_recompute, 3, 1e-9);
	j.recompute = MDL_RC_SELECTIVE;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_recompute, 1, 1e-9);
	/* LoRA: 8 more in forward; backward skips the 7 frozen weight gradients */
	j.method = MDL_LORA, j.lora_rank = 8, j.lora_targets = MDL_T_Q | MDL_T_V;
	j.recompute = MDL_RC_FULL;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 49, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.bwd, 2 * 49 - 7, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.recompute, 49, 1e-9);
	/* LoRA's A and B: 4 more GEMMs forward, their 8 gradients backward; the frozen 7 have
	 * input gradients only */
	CU_ASSERT_DOUBLE_EQUAL(k.mm_fwd, 7 + 4 + 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_bwd, 7 + 8 + 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_recompute, 12, 1e-9);
	/* compiled: 7 linears, the core, 2 norms, rotary, activation, and per adapter A, B and
	 * the fused scale-add */
	j.compile = true;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 7 + 1 + 2 + 1 + 1 + 2 * 3, 1e-9);
}

/* A MoE layer under TP with its experts split over the TP ranks keeps for the experts' weight
 * gradients the routed tokens it gathered from them (Megatron-Core's alltoall dispatcher): at
 * tp 2 with sequence parallelism, Mixtral-8x7B's k = 2 copies of 4,096 tokens of 4,096 bf16
 * values, all of them rather than the rank's own half: 2 x 4,096 x 4,096 x 2 B / 2 =
 * 33,554,432 B more saved a layer. Whole experts on each rank (expert tp 1) keep their half. */
static void experts_split_over_tp_keep_the_gathered_tokens(void)
{
	struct mdl_arch a = load("mixtral-8x7b-v0.1.json");
	struct mdl_job j = flash_job();
	double own = mdl_act_layer_saved(&a, &j, 2, true);
	j.expert_gather = 1;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 2, true), own, 1e-6);
	j.expert_gather = 2;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&a, &j, 2, true) - own, 33554432.0, 1e-3);
}

/* Mixtral-8x7B's layer, by hand from MixtralSparseMoeBlock: q, k, v, o, the router and 8 experts'
 * gate, up and down = 29 linears, two RMSNorms of 8, rotary 10, SDPA with repeat_kv and its
 * contiguous 4, SiLU and the product 2, two residual adds, the router's 4 and each expert's
 * index, scale and index_add 24: 91 in forward, 30 matrix kernels with the flash core. Grouped
 * (Megatron-Core's GroupedMLP, torchtitan): the experts' gate, up and down are 3 grouped GEMMs
 * and the tokens are permuted, scaled and unpermuted once: 8 linears, 49 launches, 9 matrix
 * kernels. Looped under expert parallelism over 2 ranks, a rank launches its own 4 experts
 * (Megatron-Core's SequentialMLP): 17 linears, 67 launches, 18 matrix kernels. */
static void grouped_experts_launch_once_a_projection(void)
{
	struct mdl_arch a = load("mixtral-8x7b-v0.1.json");
	struct mdl_job j = eager_job();
	struct mdl_launches k;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 91, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_fwd, 30, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_bwd, 2 * 29 + 1, 1e-9);
	mdl_job_launches(&a, &j, 2, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 67, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_fwd, 18, 1e-9);
	j.grouped_experts = true;
	mdl_job_launches(&a, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 49, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_fwd, 9, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(k.mm_bwd, 2 * 8 + 1, 1e-9);
	/* a dense model has no experts to group */
	struct mdl_arch d = load("llama-3.1-8b.json");
	mdl_job_launches(&d, &j, 1, &k);
	CU_ASSERT_DOUBLE_EQUAL(k.fwd, 41, 1e-9);
}

/* Llama-3.1-8B's layer with its norms and rotary as eager PyTorch ops, one 2,048-token bf16
 * sequence, by hand (act.c): two RMSNorms over 2,048 x 4,096 = 8,388,608 elements each keep the
 * fp32 input in place of the bf16 one and the bf16 normalised value, 4 B an element more:
 * 67,108,864 B more saved; their ops count 24 B an element more forward and 48 B backward, taken
 * at the measured 2.0 and 2.5 times: 48 B and 120 B; the rotary embedding's over the 2,048 x
 * (32 + 8) x 128 = 10,485,760 query and key elements 16 B and 12 B, at 2.4 and 3.7 times: 38.4 B
 * and 44.4 B: 1,207,959,552 B forward and 2,478,833,664 B backward. Tensor parallelism splits
 * the queries and keys, not the norms' input without sequence parallelism. Fused, or an
 * RMSNorm-free GPT-3 with learned positions: nothing. */
static void eager_norms_and_rotary_move_and_keep_more(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = eager_job();
	CU_ASSERT_FATAL(a.hidden == 4096 && a.kv_heads == 8 && !a.norm_bias);
	double bwd, fwd = mdl_act_layer_eager(&a, &j, 1, false, &bwd, NULL);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 1207959552.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 2478833664.0, 1);
	fwd = mdl_act_layer_eager(&a, &j, 2, false, &bwd, NULL);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 16777216.0 * 48 + 10485760.0 / 2 * 38.4, 1);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 16777216.0 * 120 + 10485760.0 / 2 * 44.4, 1);
	double eager = mdl_act_layer_saved(&a, &j, 1, false);
	j.eager_ops = false;
	CU_ASSERT_DOUBLE_EQUAL(eager - mdl_act_layer_saved(&a, &j, 1, false), 67108864.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_eager(&a, &j, 1, false, &bwd, NULL), 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 0, 0);
	struct mdl_arch g = load("gpt3-175b.json");
	CU_ASSERT_FATAL(g.hidden == 12288 && g.norm_bias && g.learned_positions);
	j.eager_ops = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_eager(&g, &j, 1, false, &bwd, NULL), 0, 0);
}

/* The loss's passes over Llama-3.1-8B's 2,048 x 128,256 = 262,668,288 logits of one bf16
 * micro-batch (job.c, mdl_job_loss_traffic), by hand: eager full (and chunked-output), the cast
 * to fp32 (6 B) and PyTorch's log-softmax (12 B at 1.45x): 23.4 B a logit forward; its backward
 * (16 B at 2.1x) and the cast back: 39.6 B. Compiled and unchunked, the casts around one fused
 * kernel each way (8 B at 1.65x): 19.2 and 19.2; compiled and chunked, the fused kernels read
 * the bf16 chunks: 6.6 and 6.6. flash-attn's kernel: 3.3 forward, 6.6 backward; Liger's fused
 * linear cross-entropy: 9.9 forward, nothing backward; fms-acceleration's fast_loss, the cast
 * (6), the shifted copy (8) and Unsloth's kernel reading it (4 B at 1.65x) forward: 20.6, and
 * the kernel's read and in-place write (8 at 1.65x), the shift's zero fill and copy (12) and the
 * cast back (6) backward: 31.2. Megatron-Core's vocab-parallel cross-entropy, eager: the cast
 * (6), the in-place subtraction, exponent and division (8 each) and the maximum's and the sum's
 * reads (4 each at 1.45x) forward: 41.6; the in-place product (8) and autograd's cast back (6)
 * backward: 14; fused: the cast with the maximum and the subtraction-exponent-sum kernel (6 + 8
 * at 1.65x) and the division (8): 31.1 forward, one kernel reading the softmax, writing it back
 * and writing the bf16 gradient: 10 backward. Transformer Engine's kernel: two reads of the
 * bf16 logits and the fp32 gradient written (8 B at 1.65x): 13.2 forward, that gradient scaled
 * in place (8) and cast back (6): 14 backward; before TE 2.18 two reads and the bf16 gradient
 * written over them (6 B at 1.65x): 9.9, scaled in place: 4. A vocab-parallel head of 2 halves
 * each; fp32 logits cast nothing: 17.4 and 33.6 (full), 35.6 and 8 (vocab-parallel), the fused
 * maximum reading them: 27.8 and 12, Transformer Engine's 19.8 and 8 either way. */
static void the_loss_costs_its_passes_over_the_logits(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = eager_job();
	double n = 262668288.0, bwd, fwd;
	CU_ASSERT_FATAL(a.vocab == 128256 && j.seq == 2048 && j.micro_batch == 1);
	const struct {
		enum mdl_loss loss;
		bool compile;
		double fwd, bwd;
	} want[] = {{MDL_LOSS_FULL, false, 23.4, 39.6},
		    {MDL_LOSS_CHUNKED_OUTPUT, false, 23.4, 39.6},
		    {MDL_LOSS_FULL, true, 19.2, 19.2},
		    {MDL_LOSS_CHUNKED_OUTPUT, true, 6.6, 6.6},
		    {MDL_LOSS_FUSED, false, 3.3, 6.6},
		    {MDL_LOSS_FUSED_FP32, false, 20.6, 31.2},
		    {MDL_LOSS_CHUNKED, false, 9.9, 0},
		    {MDL_LOSS_VOCAB_PARALLEL, false, 41.6, 14},
		    {MDL_LOSS_VOCAB_PARALLEL_FUSED, false, 31.1, 10},
		    {MDL_LOSS_VOCAB_PARALLEL_TE, false, 13.2, 14},
		    {MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY, false, 9.9, 4}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		j.loss = want[i].loss;
		j.compile = want[i].compile;
		fwd = mdl_job_loss_traffic(&a, &j, 1, &bwd);
		CU_ASSERT_DOUBLE_EQUAL(fwd, want[i].fwd * n, 1e-6 * n);
		CU_ASSERT_DOUBLE_EQUAL(bwd, want[i].bwd * n, 1e-6 * n);
		fwd = mdl_job_loss_traffic(&a, &j, 2, &bwd);
		CU_ASSERT_DOUBLE_EQUAL(fwd, want[i].fwd * n / 2, 1e-6 * n);
	}
	j.loss = MDL_LOSS_FULL;
	j.compile = false;
	j.precision = MDL_FP32;
	fwd = mdl_job_loss_traffic(&a, &j, 1, &bwd);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 17.4 * n, 1e-6 * n);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 33.6 * n, 1e-6 * n);
	j.loss = MDL_LOSS_VOCAB_PARALLEL;
	fwd = mdl_job_loss_traffic(&a, &j, 1, &bwd);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 35.6 * n, 1e-6 * n);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 8 * n, 1e-6 * n);
	j.loss = MDL_LOSS_VOCAB_PARALLEL_FUSED;
	fwd = mdl_job_loss_traffic(&a, &j, 1, &bwd);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 27.8 * n, 1e-6 * n);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 12 * n, 1e-6 * n);
	for (int i = 0; i < 2; i++) {
		j.loss = i ? MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY : MDL_LOSS_VOCAB_PARALLEL_TE;
		fwd = mdl_job_loss_traffic(&a, &j, 1, &bwd);
		CU_ASSERT_DOUBLE_EQUAL(fwd, 19.8 * n, 1e-6 * n);
		CU_ASSERT_DOUBLE_EQUAL(bwd, 8 * n, 1e-6 * n);
	}
}

/* LoRA's adapter path (act.c, adapter_traffic) on Llama-3.1-8B's q, k, v and o at 2,048 tokens
 * (inputs 4,096 each; outputs 4,096, 1,024, 1,024, 4,096: 10,240 out, 16,384 in), by hand.
 * torchtune's way (bf16 adapters, no dropout, no autocast): forward 2 B an input element (lora_A
 * reads x again) and 12 an output element (lora_B's output 2, the scaling 4, the sum 6);
 * backward 6 and 6 (the input gradient summed, the scaling's and lora_B's reads):
 * 2,048 x (2 x 16,384 + 12 x 10,240) = 318,767,104 B forward, 2,048 x (6 x 16,384 + 6 x 10,240)
 * = 327,155,712 B backward. PEFT's fp32 adapters on a pure bf16 base with dropout 0.1: forward
 * 10 an input element (the cast 6, dropout's read 4) and 28 an output one (4 + 8 + 10 + the cast
 * back 6), backward 12 and 24: 922,746,880 B and 905,969,664 B. Their weights, gradients and
 * AdamW states are fp32, 16 B an adapter parameter where bf16 ones take 8; the dropout keeps 4
 * B an element and its mask 1 (5 x 16,384 x 2,048 B). Compiled: the path fuses, nothing. The
 * widest tensor the path hands on (what step.c's L2 test takes): 2,048 x 4,096 x 2 B, 4 B an
 * element with fp32 adapters. */
static void lora_adapter_path_moves_its_casts_and_sums(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	unsigned qkvo = MDL_T_Q | MDL_T_K | MDL_T_V | MDL_T_O;
	struct mdl_job j = {MDL_LORA, 16, qkvo, MDL_BF16, MDL_ADAMW, MDL_RC_NONE, MDL_ATTN_FLASH,
			    2048, 1};
	struct mdl_eager ch[MDL_EAGER_CHAINS];
	double bwd, fwd = mdl_act_layer_eager(&a, &j, 1, false, &bwd, ch);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 318767104.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 327155712.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(ch[MDL_EAGER_ADAPTER].fwd, fwd, 0);
	CU_ASSERT_DOUBLE_EQUAL(ch[MDL_EAGER_ADAPTER].tensor, 2048.0 * 4096 * 2, 0);
	CU_ASSERT_DOUBLE_EQUAL(ch[MDL_EAGER_NORM].fwd + ch[MDL_EAGER_ROPE].bwd, 0, 0);
	struct mdl_states st16, st32;
	mdl_job_states(&a, &j, &st16);
	j.lora_fp32 = true;
	j.lora_dropout = 0.1;
	fwd = mdl_act_layer_eager(&a, &j, 1, false, &bwd, ch);
	CU_ASSERT_DOUBLE_EQUAL(ch[MDL_EAGER_ADAPTER].tensor, 2048.0 * 4096 * 4, 0);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 922746880.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 905969664.0, 1);
	mdl_job_states(&a, &j, &st32);
	CU_ASSERT_EQUAL(st32.trainable_params, st16.trainable_params);
	double n = (double)st16.trainable_params;
	CU_ASSERT_DOUBLE_EQUAL(st16.gradients_bytes + st16.optimizer_bytes, 6.0 * n, 1);
	CU_ASSERT_DOUBLE_EQUAL(st32.gradients_bytes + st32.optimizer_bytes, 12.0 * n, 1);
	CU_ASSERT_DOUBLE_EQUAL(st32.weights_bytes - st16.weights_bytes, 2.0 * n, 1);
	struct mdl_act_item it[MDL_ACT_MAX_ITEMS];
	int k = mdl_act_layer_items(&a, &j, 1, false, it);
	double drop = -1;
	for (int i = 0; i < k; i++)
		if (!strcmp(it[i].name, "lora.dropout"))
			drop = it[i].bytes;
	CU_ASSERT_DOUBLE_EQUAL(drop, 5.0 * 16384 * 2048, 1);
	j.compile = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_eager(&a, &j, 1, false, &bwd, NULL), 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 0, 0);
}

/* What a layer's item of that name keeps for backward, -1 without one. */
static double item_kept(const struct mdl_arch *a, const struct mdl_job *j, const char *name)
{
	struct mdl_act_item it[MDL_ACT_MAX_ITEMS];
	int k = mdl_act_layer_items(a, j, 1, false, it);
	for (int i = 0; i < k; i++)
		if (!strcmp(it[i].name, name))
			return it[i].kept;
	return -1;
}

/* DoRA on Llama-3.1-8B's q and v (hidden 4096, keys and values 1024), r 16, pure bf16 with
 * fp32 adapters (PEFT's autocast_adapter_dtype), 2,048 tokens: every figure solved by hand from
 * PEFT's DoraLinearLayer.forward (job.c, dora_weight_pass; act.c, dora_items and
 * dora_output_traffic). */
static void dora_norms_every_adapted_weight_in_each_forward(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_LORA, 16, MDL_T_Q | MDL_T_V, MDL_BF16, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	j.lora_fp32 = true;
	struct mdl_states lora, dora;
	mdl_job_states(&a, &j, &lora);
	struct mdl_weight_passes wl, wd;
	mdl_job_weight_passes(&a, &j, &wl);
	struct mdl_flops fl, fd;
	mdl_job_flops(&a, &j, &fl);
	struct mdl_launches kl, kd;
	mdl_job_launches(&a, &j, 1, &kl);
	double bl, fwl = mdl_act_layer_eager(&a, &j, 1, false, &bl, NULL);
	j.dora = true;
	mdl_job_states(&a, &j, &dora);
	/* a magnitude per output feature: (4096 + 1024) x 32 layers */
	CU_ASSERT_EQUAL(dora.trainable_params - lora.trainable_params, 163840);
	/* q: the identity written and read 2 x 4096^2 x 4, x A 4096 x 16 x 4 twice, B A written
	 * 4096^2 x 4, W cast to fp32 (2 + 4), the scaling (8), the sum (12) and the norm (4):
	 * 705,167,360 B; v (4096 x 1024): 277,348,352 B; none in backward without a recompute */
	mdl_job_weight_passes(&a, &j, &wd);
	CU_ASSERT_DOUBLE_EQUAL(wd.fwd - wl.fwd, 705167360.0 + 277348352.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(wd.bwd - wl.bwd, 0, 0);
	/* held at q's sum: the identity 4096^2 x 4, x A, B A, the fp32 W, the scaled product and
	 * the sum, 4 x 4096^2 x 4 */
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, false),
			       67108864.0 + 262144.0 + 268435456.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, true), 0, 0);
	/* B A from the identity, 2 (in^2 r + in r out): q 1,073,741,824, v 671,088,640 FLOPs */
	mdl_job_flops(&a, &j, &fd);
	CU_ASSERT_DOUBLE_EQUAL(fd.dora_fwd, 1744830464.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(fd.layer_fwd_exec - fl.layer_fwd_exec, 1744830464.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(fd.layer_bwd_exec, fl.layer_bwd_exec, 1);
	CU_ASSERT_DOUBLE_EQUAL(fd.layer_fwd, fl.layer_fwd, 0); /* not model FLOPs */
	/* kept: the base outputs in bf16 and the adapters' in fp32, 2,048 x 5,120 of each */
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "dora.base_output"), 2.0 * 2048 * 5120, 1);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "dora.lora_output"), 4.0 * 2048 * 5120, 1);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "dora.weight_copy"), -1, 0);
	/* the output path: 54 B an output element forward where LoRA's moves 28, 82 backward
	 * where LoRA's moves 24 */
	double bd, fwd = mdl_act_layer_eager(&a, &j, 1, false, &bd, NULL);
	CU_ASSERT_DOUBLE_EQUAL(fwd - fwl, 26.0 * 2048 * 5120, 1);
	CU_ASSERT_DOUBLE_EQUAL(bd - bl, 58.0 * 2048 * 5120, 1);
	/* kernels: the norm's 7 and W's cast, the output's 5, twice those 5 backward; two more
	 * matrix kernels forward */
	mdl_job_launches(&a, &j, 1, &kd);
	CU_ASSERT_DOUBLE_EQUAL(kd.fwd - kl.fwd, 2 * 13.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(kd.bwd - kl.bwd, 2 * 10.0, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(kd.mm_fwd - kl.mm_fwd, 2 * 2.0, 1e-9);
	/* one fused q/k/v projection (PEFT's one adapter on it): one identity, B A 4096 x 5120 */
	j.fused_qkv = true;
	mdl_job_weight_passes(&a, &j, &wd);
	CU_ASSERT_DOUBLE_EQUAL(wd.fwd - wl.fwd, 705167360.0 + 277348352.0 - 134742016.0, 1);
	mdl_job_flops(&a, &j, &fd); /* lora_A over the identity once: 2 x 4096^2 x 16 less */
	CU_ASSERT_DOUBLE_EQUAL(fd.dora_fwd, 1744830464.0 - 536870912.0, 1);
	j.fused_qkv = false;
	/* a full recompute runs the norm again, and holds it in backward */
	j.recompute = MDL_RC_FULL;
	mdl_job_weight_passes(&a, &j, &wd);
	CU_ASSERT_DOUBLE_EQUAL(wd.bwd, 705167360.0 + 277348352.0, 1);
	CU_ASSERT_DOUBLE_EQUAL(mdl_job_weight_live(&a, &j, 1, true),
			       67108864.0 + 262144.0 + 268435456.0, 1);
	/* lora_dropout: PEFT's base product again on the dropped fp32 input, 2 T in out FLOPs
	 * each way, its fp32 output kept and the fp32 W it read (4 x 20,971,520) */
	j.recompute = MDL_RC_NONE;
	j.lora_dropout = 0.1;
	mdl_job_flops(&a, &j, &fd);
	double again = 2.0 * 2048 * (4096.0 * 4096 + 4096.0 * 1024);
	CU_ASSERT_DOUBLE_EQUAL(fd.dora_fwd, 1744830464.0 + again, 1);
	CU_ASSERT_DOUBLE_EQUAL(fd.dora_bwd, again, 1);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "dora.base_output"), 4.0 * 2048 * 5120, 1);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "dora.weight_copy"), 4.0 * 20971520, 1);
}

/* Unsloth's fused LoRA functions on Llama-3.1-8B with every linear adapted, pure bf16, 2,048
 * tokens, solved by hand from unsloth/kernels/fast_lora.py (LoRA_QKV, LoRA_W, LoRA_MLP). */
static void unsloth_fuses_whole_groups_of_adapters(void)
{
	struct mdl_arch a = load("llama-3.1-8b.json");
	struct mdl_job j = {MDL_LORA, 16, MDL_T_ALL, MDL_BF16, MDL_ADAMW, MDL_RC_NONE,
			    MDL_ATTN_FLASH, 2048, 1};
	struct mdl_launches kp, ku;
	mdl_job_launches(&a, &j, 1, &kp);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "down_proj.input"), 2.0 * 2048 * 14336, 1);
	CU_ASSERT(item_kept(&a, &j, "mlp.act_out") > 0);
	CU_ASSERT(item_kept(&a, &j, "lora.intermediate") > 0);
	j.fused_lora = true;
	/* LoRA_MLP keeps X, e and g: neither act(e) nor down's input h; no x A anywhere */
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "down_proj.input"), 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "mlp.act_out"), -1, 0);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "lora.intermediate"), 0, 0);
	CU_ASSERT_DOUBLE_EQUAL(item_kept(&a, &j, "mlp.input"), 2.0 * 2048 * 4096, 1);
	/* the adapters' traffic: X read for X A (38,912 input features a token over the seven
	 * linears) and the output read and written by the addmm_ (43,008 output features), 2 B
	 * each; backward the input gradient's addmm_ and X again, the output gradient twice */
	double bwd, fwd = mdl_act_layer_eager(&a, &j, 1, false, &bwd, NULL);
	CU_ASSERT_DOUBLE_EQUAL(fwd, 2048.0 * (2 * 38912 + 4 * 43008), 1);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 2048.0 * (6 * 38912 + 4 * 43008), 1);
	/* two kernels an adapter where PEFT launches four, and the SwiGLU one kernel */
	mdl_job_launches(&a, &j, 1, &ku);
	CU_ASSERT_DOUBLE_EQUAL(kp.fwd - ku.fwd, 7 * 2.0 + 1, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(kp.bwd - ku.bwd, 2 * (7 * 2.0 + 1), 1e-9);
	/* fp32 adapters: Unsloth casts A and B to X's dtype, so none runs at the fp32 rate */
	j.lora_fp32 = true;
	struct mdl_flops f;
	mdl_job_flops(&a, &j, &f);
	CU_ASSERT_DOUBLE_EQUAL(f.adapter_fwd, 0, 0);
	/* q and v alone make no whole group: PEFT's layers run them, 2 T r (in + out) */
	j.lora_targets = MDL_T_Q | MDL_T_V;
	mdl_job_flops(&a, &j, &f);
	CU_ASSERT_DOUBLE_EQUAL(f.adapter_fwd, 2.0 * 2048 * 16 * (8192 + 5120), 1);
	j.lora_fp32 = false;
	struct mdl_launches kq;
	mdl_job_launches(&a, &j, 1, &ku);
	j.fused_lora = false;
	mdl_job_launches(&a, &j, 1, &kq);
	CU_ASSERT_DOUBLE_EQUAL(ku.fwd, kq.fwd, 0);
	CU_ASSERT(!mdl_job_lora_fused(&a, &j, &a.layer[0]));
}

static void enum_names_parse_with_allowed_values_listed(void)
{
	int v;
	char err[128];

	CU_ASSERT_EQUAL(mdl_parse_enum("optimizer", "lion", NULL, &v, err, sizeof err), 0);
	CU_ASSERT_EQUAL(v, MDL_LION);
	CU_ASSERT_EQUAL(mdl_parse_enum("precision", "fp4", NULL, &v, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "(allowed: bf16-mixed, bf16, fp16-mixed, fp32, fp8"));
	/* a command's extra name: taken as -1, listed first */
	CU_ASSERT_EQUAL(mdl_parse_enum("recompute", "auto", "auto", &v, err, sizeof err), 0);
	CU_ASSERT_EQUAL(v, -1);
	CU_ASSERT_EQUAL(mdl_parse_enum("recompute", "some", "auto", &v, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "(allowed: auto, none, "));
	CU_ASSERT_EQUAL(mdl_parse_enum("loss", "auto", NULL, &v, err, sizeof err), -1);
}

int suite_job(void)
{
	static const struct test_case c[] = {
		{"bytes_per_parameter_follow_precision_and_optimizer",
		 bytes_per_parameter_follow_precision_and_optimizer},
		{"qlora_base_weights_are_nf4_with_double_quantisation",
		 qlora_base_weights_are_nf4_with_double_quantisation},
		{"quantised_head_dequantises_for_each_gemm",
		 quantised_head_dequantises_for_each_gemm},
		{"gptq_base_weights_and_their_dequantisation",
		 gptq_base_weights_and_their_dequantisation},
		{"a_base_quantised_from_fp16_is_cast_after_each_dequantisation",
		 a_base_quantised_from_fp16_is_cast_after_each_dequantisation},
		{"torchao_nf4_dequantises_by_a_chain_of_ops",
		 torchao_nf4_dequantises_by_a_chain_of_ops},
		{"gpt_layer_saves_korthikanti_bytes", gpt_layer_saves_korthikanti_bytes},
		{"fp8_casts_follow_transformer_engine", fp8_casts_follow_transformer_engine},
		{"flash_attention_removes_the_quadratic_term",
		 flash_attention_removes_the_quadratic_term},
		{"logits_and_fp32_loss_are_counted", logits_and_fp32_loss_are_counted},
		{"logits_cast_in_the_model_free_the_bf16_ones",
		 logits_cast_in_the_model_free_the_bf16_ones},
		{"mlp_gradients_stand_beside_the_saved_tensors",
		 mlp_gradients_stand_beside_the_saved_tensors},
		{"half_layers_hold_the_larger_half", half_layers_hold_the_larger_half},
		{"model_flops_follow_megatron_convention", model_flops_follow_megatron_convention},
		{"op_sac_keeps_every_other_matmul", op_sac_keeps_every_other_matmul},
		{"lora_dropout_keeps_the_dropped_inputs", lora_dropout_keeps_the_dropped_inputs},
		{"frozen_linears_keep_no_input", frozen_linears_keep_no_input},
		{"loop_holds_returned_logits", loop_holds_returned_logits},
		{"kbit_upcast_keeps_unquantised_weights_in_fp32",
		 kbit_upcast_keeps_unquantised_weights_in_fp32},
		{"kbit_upcast_streams_fp32", kbit_upcast_streams_fp32},
		{"lora_adapter_path_moves_its_casts_and_sums",
		 lora_adapter_path_moves_its_casts_and_sums},
		{"dora norms every adapted weight in each forward",
		 dora_norms_every_adapted_weight_in_each_forward},
		{"unsloth fuses whole groups of adapters", unsloth_fuses_whole_groups_of_adapters},
		{"eager_softmax_keeps_fp32_as_pytorch_ops",
		 eager_softmax_keeps_fp32_as_pytorch_ops},
		{"fused_qkv_keeps_the_whole_projection", fused_qkv_keeps_the_whole_projection},
		{"norm_head_keeps_the_normalised_weight", norm_head_keeps_the_normalised_weight},
		{"gemma2_softcaps_keep_tanh_outputs", gemma2_softcaps_keep_tanh_outputs},
		{"optimizer_step_bytes_follow_the_dtypes", optimizer_step_bytes_follow_the_dtypes},
		{"early_stop_leaves_out_the_down_projection",
		 early_stop_leaves_out_the_down_projection},
		{"repeat_kv_keeps_every_head", repeat_kv_keeps_every_head},
		{"fp8_recipes_cast_and_keep", fp8_recipes_cast_and_keep},
		{"te_fp8_keeps_linear_inputs_in_one_byte", te_fp8_keeps_linear_inputs_in_one_byte},
		{"packed_documents_attend_apart", packed_documents_attend_apart},
		{"fused_swiglu_keeps_its_input_alone", fused_swiglu_keeps_its_input_alone},
		{"compile_recomputes_only_what_fusible_ops_read",
		 compile_recomputes_only_what_fusible_ops_read},
		{"launches_follow_the_eager_layer", launches_follow_the_eager_layer},
		{"eager norms and rotary move and keep more",
		 eager_norms_and_rotary_move_and_keep_more},
		{"the loss costs its passes over the logits",
		 the_loss_costs_its_passes_over_the_logits},
		{"experts split over tp keep the gathered tokens",
		 experts_split_over_tp_keep_the_gathered_tokens},
		{"grouped experts launch once a projection",
		 grouped_experts_launch_once_a_projection},
		{"enum_names_parse_with_allowed_values_listed",
		 enum_names_parse_with_allowed_values_listed},
		{"recompute_modules_drop_what_megatron_discards",
		 recompute_modules_drop_what_megatron_discards},
	};
	return add_suite("job", c, (int)(sizeof c / sizeof c[0]));
}
