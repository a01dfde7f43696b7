//! Where each parameter tensor lives in the one flat parameter buffer (llm.c's
//! `ParameterTensors`): the names, shapes and offsets a checkpoint stores.

use super::Config;

/// One named parameter tensor inside the flat parameter buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: String,
    pub shape: Vec<usize>,
    pub offset: usize,
    pub len: usize,
}

/// Where each parameter tensor lives in the flat buffer, in checkpoint order:
/// `wte, wpe, blocks.{l}.(w_qkv, b_qkv, w_proj, b_proj, w_fc, b_fc, w_out, b_out), w_lm, b_lm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamLayout {
    pub specs: Vec<ParamSpec>,
    pub total: usize,
    /// Offsets of the fixed tensors and of each block's first tensor.
    pub(super) wte: usize,
    pub(super) wpe: usize,
    blocks: Vec<usize>,
    pub(super) w_lm: usize,
    /// Width of the fused projection's output, `C + 2·H_kv·D`.
    pub(super) qkv: usize,
}

/// Offsets of one block's tensors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockOffsets {
    pub w_qkv: usize,
    pub b_qkv: usize,
    pub w_proj: usize,
    pub b_proj: usize,
    pub w_fc: usize,
    pub b_fc: usize,
    pub w_out: usize,
    pub b_out: usize,
}

impl ParamLayout {
    pub fn new(cfg: &Config) -> ParamLayout {
        let (V, T, C) = (cfg.vocab_size, cfg.seq_len, cfg.d_model);
        // q, k and v of a token: C + 2·H_kv·D channels (3C unless grouped)
        let QKV = C + 2 * cfg.kv_channels();
        let mut specs = Vec::new();
        let mut total = 0;
        let mut push = |name: String, shape: Vec<usize>| {
            let len = shape.iter().product();
            specs.push(ParamSpec {
                name,
                shape,
                offset: total,
                len,
            });
            total += len;
            total - len
        };
        let wte = push("wte".into(), vec![V, C]);
        let wpe = push("wpe".into(), vec![T, C]);
        let mut blocks = Vec::new();
        for l in 0..cfg.n_layers {
            let p = |s: &str| format!("blocks.{l}.{s}");
            blocks.push(push(p("w_qkv"), vec![C, QKV]));
            push(p("b_qkv"), vec![QKV]);
            push(p("w_proj"), vec![C, C]);
            push(p("b_proj"), vec![C]);
            push(p("w_fc"), vec![C, 4 * C]);
            push(p("b_fc"), vec![4 * C]);
            push(p("w_out"), vec![4 * C, C]);
            push(p("b_out"), vec![C]);
        }
        let w_lm = push("w_lm".into(), vec![C, V]);
        push("b_lm".into(), vec![V]);
        ParamLayout {
            specs,
            total,
            wte,
            wpe,
            blocks,
            w_lm,
            qkv: QKV,
        }
    }

    pub fn get(&self, name: &str) -> Option<&ParamSpec> {
        self.specs.iter().find(|s| s.name == name)
    }

    /// Width of the fused projection's output: `C + 2·H_kv·D`.
    pub fn qkv(&self) -> usize {
        self.qkv
    }

    pub(crate) fn wte(&self) -> usize {
        self.wte
    }

    pub(crate) fn wpe(&self) -> usize {
        self.wpe
    }

    pub(crate) fn w_lm(&self) -> usize {
        self.w_lm
    }

    pub(crate) fn block(&self, l: usize, C: usize) -> BlockOffsets {
        let w_qkv = self.blocks[l];
        let b_qkv = w_qkv + C * self.qkv;
        let w_proj = b_qkv + self.qkv;
        let b_proj = w_proj + C * C;
        let w_fc = b_proj + C;
        let b_fc = w_fc + C * 4 * C;
        let w_out = b_fc + 4 * C;
        let b_out = w_out + 4 * C * C;
        BlockOffsets {
            w_qkv,
            b_qkv,
            w_proj,
            b_proj,
            w_fc,
            b_fc,
            w_out,
            b_out,
        }
    }
}
