//! The text objectives of paper section 3 as [`TrainTask`]s: good-view JEPA, bad-view
//! JEPA and next-token prediction, all on the same [`TextEncoder`].
//!
//! One step:
//! 1. **views**: `batch_size` groups drawn from the seeded view stream; per group
//!    `n_global + n_local` spans ([`crate::text::views`]), or, for next-token, one text
//!    prefixed with `[CLS]` as beginning-of-sequence;
//! 2. **forward**: all `V * n` views in one padded batch, split back into `V` `[n, d]`
//!    embeddings;
//! 3. **losses**: `invariance + lambda * SIGReg` ([`jepa_loss`]), or the next-token
//!    cross-entropy `-log softmax(H W^T)[y]` averaged over real (non-pad) targets.

use crate::models::text_encoder::ModelConfig;
use crate::tasks::TaskConfig;
use crate::tasks::TaskKind;
use crate::text::corpus::DataConfig;
use crate::text::tokenizer::TokenizerConfig;
use crate::text::views::ViewsConfig;
use crate::train::config::LossConfig;
use crate::train::config::OptimConfig;
use crate::train::config::RunConfig;
use burn::prelude::*;
use burn::tensor::backend::AutodiffBackend;
use rand::Rng;
use rand::seq::index::sample;

use crate::config::parse_toml;
use crate::formats::features::Features;
use crate::measure::metrics::{MetricOptions, measure};
use crate::measure::retrieval::PairScores;
use crate::models::text_encoder::{EncoderSpec, TextEncoder};
use crate::rng::{Stream, generator};
use crate::text::shards::{ShardStream, part_seed};
use crate::text::tokenizer::TextTokenizer;
use crate::text::views::{Padded, TokenizedCorpus, pad_rows, sample_views};
use crate::theory::view_kind::ViewKind;
use crate::train::data_parallel::{Shard, ShardLoss, ShardOutput, check_split};
use crate::train::{StepOutput, TrainTask, jepa_loss};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// The whole configuration of a training run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct TrainConfig {
    /// Which trainer reads this file (`text` here).
    pub task: TaskConfig,
    /// Run length, seed, objective and logging cadence.
    pub run: RunConfig,
    /// Which corpus to read.
    pub data: DataConfig,
    /// Tokenizer to train or load.
    pub tokenizer: TokenizerConfig,
    /// Encoder architecture.
    pub model: ModelConfig,
    /// View sampling.
    pub views: ViewsConfig,
    /// JEPA loss (invariance + lambda SIGReg).
    pub loss: LossConfig,
    /// AdamW and its schedule.
    pub optim: OptimConfig,
    /// Periodic alignment evaluation against a frozen target.
    pub eval: EvalConfig,
}

/// Alignment evaluation against a frozen target (paper section 5).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvalConfig {
    /// Frozen target features (`.npy`/`.npz`, one row per held-out group); "" = none.
    pub target: String,
    /// Use at most this many held-out groups.
    pub max_groups: usize,
    /// Neighbours for mutual k-NN.
    pub k: usize,
    /// Also score caption vs caption within the language: each held-out group's first
    /// text against its second (`pair_*` metrics), which needs no second model.
    pub pairs: bool,
}

impl Default for EvalConfig {
    fn default() -> Self {
        Self {
            target: String::new(),
            max_groups: 1000,
            k: 10,
            pairs: true,
        }
    }
}

impl TrainConfig {
    /// Parses TOML text (`source` names it in errors), then applies `overrides`
    /// (`key.path=value`, the value parsed as TOML, else taken as a string).
    pub fn from_toml(source: &str, text: &str, overrides: &[String]) -> Result<Self> {
        let cfg: TrainConfig = parse_toml(source, text, overrides)?;
        cfg.validate(source)?;
        Ok(cfg)
    }

    /// The resolved config as TOML (saved in each run folder).
    pub fn to_toml(&self) -> Result<String> {
        crate::config::to_toml(self)
    }

    /// Checks ranges that serde cannot: positive sizes, fractions in (0, 1].
    pub fn validate(&self, source: &str) -> Result<()> {
        let bad = |field: &str, msg: &str| Err(Error::format(source, field, msg));
        if self.task.kind != TaskKind::Text {
            return bad(
                "task.kind",
                "a scene task is read by scene_run::SceneTrainConfig, not the text config",
            );
        }
        let (d, _, h, _) = self.model.dims();
        if h == 0 || !d.is_multiple_of(h) {
            return bad(
                "model.heads",
                "d_model must be a positive multiple of heads",
            );
        }
        if self.views.n_global == 0 {
            return bad(
                "views.n_global",
                "at least one global view is needed (they are the prediction target)",
            );
        }
        for (f, v) in [
            ("views.global_frac", self.views.global_frac),
            ("views.local_frac", self.views.local_frac),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return bad(f, "expected a fraction in (0, 1]");
            }
        }
        if !(0.0..1.0).contains(&self.views.mask_ratio) {
            return bad("views.mask_ratio", "expected a fraction in [0, 1)");
        }
        if self.views.batch_size < 2 {
            return bad(
                "views.batch_size",
                "expected at least 2 (SIGReg needs a batch)",
            );
        }
        if let Err(e) = self.run.check_plateau() {
            return bad("run.plateau_tol", &e);
        }
        if self.run.steps == 0 {
            return bad("run.steps", "expected at least 1");
        }
        // The one replica-count check (`check_split`), shared with the scene tasks and
        // the data-parallel step itself.
        if let Err(e) = check_split(self.run.data_parallel, self.views.batch_size) {
            return bad("run.data_parallel", &e.to_string());
        }
        let parts = self.data.stream_parts;
        if parts == 0 {
            return bad("data.stream_parts", "expected at least 1 (1: one stream)");
        }
        if !self.views.batch_size.is_multiple_of(parts) {
            return bad(
                "data.stream_parts",
                &format!(
                    "{parts} parts do not divide views.batch_size = {}: each step takes \
                     batch_size / stream_parts groups from every part",
                    self.views.batch_size
                ),
            );
        }
        if parts > 1 && self.data.source != crate::text::corpus::DataSource::Shards {
            return bad(
                "data.stream_parts",
                "parts are streams of shard files: set data.source = \"shards\" or leave it at 1",
            );
        }
        if self.model.max_len < 4 {
            return bad("model.max_len", "expected at least 4 tokens");
        }
        if self.loss.slices == 0 || self.loss.knots < 2 {
            return bad("loss.slices", "expected slices >= 1 and knots >= 2");
        }
        Ok(())
    }
}

/// Token ids and padding mask of a padded batch as tensors.
///
/// # Shapes
/// `p` `[n, len]` -> (`[n, len]` Int, `[n, len]` Bool).
pub fn padded_tensors<B: Backend>(
    p: &Padded,
    device: &B::Device,
) -> (Tensor<B, 2, Int>, Tensor<B, 2, Bool>) {
    (
        Tensor::from_data(TensorData::new(p.ids.clone(), [p.n, p.len]), device),
        Tensor::from_data(TensorData::new(p.pad.clone(), [p.n, p.len]), device),
    )
}

/// Whether sequences get a leading `[CLS]` (CLS pooling, and BOS for causal models).
pub fn uses_cls(spec: &EncoderSpec) -> bool {
    spec.cls_pooling || spec.causal
}

/// Tokens of a text the encoder reads: its context `max_len`, less one when it prepends
/// [CLS] ([`uses_cls`]); longer texts are cut to this many before embedding.
pub fn context_tokens(spec: &EncoderSpec) -> usize {
    spec.max_len - usize::from(uses_cls(spec))
}

/// The encoder's input for a batch of texts, as every embedding path builds it (the CLI's
/// [`embed_texts`] and the browser's checkpoint lab): each text tokenised, cut to
/// [`context_tokens`], [CLS] prepended when the model uses it, padded to the batch's
/// longest ([`pad_rows`]); and each text's token count before the cut.
///
/// # Shapes
/// `texts` n strings -> ids and pad `[n, L]` (L = longest kept text + [CLS]), `[n]` counts
pub fn tokenize_batch(
    tok: &TextTokenizer,
    spec: &EncoderSpec,
    texts: &[String],
) -> Result<(Padded, Vec<usize>)> {
    let cls = uses_cls(spec).then_some(tok.cls);
    let cap = context_tokens(spec);
    let mut counts = Vec::with_capacity(texts.len());
    let ids: Vec<Vec<u32>> = texts
        .iter()
        .map(|t| {
            let mut v = tok.encode(t)?;
            counts.push(v.len());
            v.truncate(cap);
            Ok(v)
        })
        .collect::<Result<_>>()?;
    let rows: Vec<&[u32]> = ids.iter().map(Vec::as_slice).collect();
    Ok((pad_rows(&rows, cls, tok.pad), counts))
}

/// Embeds `texts` with a trained encoder: the pooled last hidden state before any
/// projector ([`TextEncoder::represent`]), in batches of `batch`.
///
/// # Shapes
/// `texts` `n` strings -> row-major `[n, d_model]`.
pub fn embed_texts<B: Backend>(
    model: &TextEncoder<B>,
    spec: &EncoderSpec,
    tok: &TextTokenizer,
    texts: &[String],
    batch: usize,
    device: &B::Device,
) -> Result<Vec<f32>> {
    let mut out = Vec::with_capacity(texts.len() * spec.d_model);
    for chunk in texts.chunks(batch.max(1)) {
        let (padded, _) = tokenize_batch(tok, spec, chunk)?;
        let (i, p) = padded_tensors::<B>(&padded, device);
        let z = model.represent(i, p).into_data();
        out.extend(z.iter::<f32>());
    }
    Ok(out)
}

/// A corpus of `groups` groups of `texts` texts of exactly `len` token ids drawn uniformly
/// from `ids` (seeded): synthetic data for throughput benchmarks and tests.
///
/// # Shapes
/// -> `groups x texts x len` ids.
pub fn random_corpus(
    groups: usize,
    texts: usize,
    len: usize,
    ids: std::ops::Range<u32>,
    seed: u64,
) -> TokenizedCorpus {
    let mut rng = generator(seed, Stream::Views, u64::MAX);
    let groups = (0..groups)
        .map(|_| {
            (0..texts)
                .map(|_| (0..len).map(|_| rng.random_range(ids.clone())).collect())
                .collect()
        })
        .collect();
    TokenizedCorpus::new(groups, 0)
}

/// The next `b` groups of `stream` with at least `need` non-empty texts, tokenized and
/// trimmed, and how many groups were skipped for having fewer.
fn draw_batch(
    stream: &mut ShardStream,
    tok: &TextTokenizer,
    trim: usize,
    b: usize,
    need: usize,
) -> Result<(Vec<Vec<Vec<u32>>>, usize)> {
    let (mut out, mut skipped, start) = (Vec::with_capacity(b), 0, stream.epoch());
    while out.len() < b {
        let g = stream.next_group()?;
        let ids = g
            .texts
            .iter()
            .map(|t| tok.encode(t))
            .collect::<Result<Vec<_>>>()?;
        let texts = TokenizedCorpus::new(vec![ids], trim)
            .groups
            .pop()
            .unwrap_or_default();
        if texts.len() >= need {
            out.push(texts);
        } else {
            skipped += 1;
            // A whole epoch passed without a usable group: there is none.
            if out.is_empty() && stream.epoch() > start + 1 {
                return Err(Error::format(
                    stream.names().join(", "),
                    "texts",
                    format!("no group has {need} non-empty text(s), which this objective needs"),
                ));
            }
        }
    }
    Ok((out, skipped))
}

/// Held-out texts (one per group) and what they are compared with: a frozen target
/// (another model's features of the same groups) and/or a second text of each group.
#[derive(Debug, Clone)]
pub struct EvalSet {
    /// One text per held-out group, row-aligned with `target`.
    pub texts: Vec<String>,
    /// Frozen target features, `[n, layers, d]` (`n = texts.len()`), if any.
    pub target: Option<Features>,
    /// Another text of the same groups, row-aligned with `texts` (empty: no pair
    /// metrics): the within-language caption-vs-caption score.
    pub partners: Vec<String>,
    /// Neighbours for mutual k-NN.
    pub k: usize,
}

/// A text encoder plus its data and objective.
pub struct TextTask {
    /// Run configuration.
    pub cfg: TrainConfig,
    /// Architecture.
    pub spec: EncoderSpec,
    /// Tokenizer.
    pub tokenizer: TextTokenizer,
    /// Tokenized training groups.
    pub corpus: TokenizedCorpus,
    /// Optional periodic evaluation.
    pub eval: Option<EvalSet>,
    /// Streaming source (`data.source = "shards"`): each step's groups are read from it
    /// and tokenized on the fly; `corpus` then holds only the current batch.
    pub stream: Option<StreamSource>,
}

/// The shard streams feeding a [`TextTask`], with the step it serves next.
pub struct StreamSource {
    /// The parts this process reads (`data.stream_parts` = P in all): parts
    /// `first .. first + parts.len()`, each a shuffled group stream.
    pub parts: Vec<ShardStream>,
    /// Index of the first part read here.
    pub first: usize,
    /// Groups skipped because they had too few non-empty texts (good views need two).
    pub skipped: usize,
    next_step: usize,
}

impl TextTask {
    /// Tokenizes `groups` (trimmed to `views.trim`) and derives the encoder spec.
    pub fn new(
        cfg: TrainConfig,
        tokenizer: TextTokenizer,
        groups: &[crate::text::corpus::Group],
    ) -> Result<Self> {
        let tokenized = groups
            .iter()
            .map(|g| {
                g.texts
                    .iter()
                    .map(|t| tokenizer.encode(t))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        let corpus = TokenizedCorpus::new(tokenized, cfg.views.trim);
        if corpus.groups.is_empty() {
            return Err(Error::invalid(
                "training corpus is empty after tokenization",
            ));
        }
        let causal = cfg.run.objective == ViewKind::NextToken;
        let spec = EncoderSpec::from_config(&cfg.model, tokenizer.vocab_size(), causal)?;
        Ok(Self {
            cfg,
            spec,
            tokenizer,
            corpus,
            eval: None,
            stream: None,
        })
    }

    /// A task whose training groups stream from `stream` (a corpus larger than memory):
    /// step `s` takes the next `views.batch_size` usable groups. The stream is a function
    /// of its seed, so a resumed run replays it up to its step (re-reading, and
    /// re-tokenizing, what the earlier steps consumed) and continues exactly.
    pub fn streaming(
        cfg: TrainConfig,
        tokenizer: TextTokenizer,
        stream: ShardStream,
    ) -> Result<Self> {
        Self::streaming_parts(cfg, tokenizer, vec![stream], 0)
    }

    /// A task streaming parts `first .. first + parts.len()` of the `data.stream_parts` =
    /// P parts (each seeded by [`crate::text::shards::part_seed`]): step `s` takes
    /// `batch_size / P` groups from each. A process reading all P parts trains the whole
    /// batch; one reading `P / N` of them is node `first / (P / N)` of `N`, whose batch is
    /// its parts' groups and whose replicas split them (see [`Self::local_shard`]). Errors
    /// unless the parts read are a whole node's share.
    pub fn streaming_parts(
        cfg: TrainConfig,
        tokenizer: TextTokenizer,
        parts: Vec<ShardStream>,
        first: usize,
    ) -> Result<Self> {
        let (total, mine) = (cfg.data.stream_parts.max(1), parts.len());
        if mine == 0
            || !total.is_multiple_of(mine)
            || !first.is_multiple_of(mine)
            || first + mine > total
        {
            return Err(Error::invalid(format!(
                "streamed parts {first}..{} of data.stream_parts = {total}: expected a \
                 node's share (P / N consecutive parts from a multiple of P / N)",
                first + mine
            )));
        }
        let causal = cfg.run.objective == ViewKind::NextToken;
        let spec = EncoderSpec::from_config(&cfg.model, tokenizer.vocab_size(), causal)?;
        Ok(Self {
            cfg,
            spec,
            tokenizer,
            corpus: TokenizedCorpus::default(),
            eval: None,
            stream: Some(StreamSource {
                parts,
                first,
                skipped: 0,
                next_step: 0,
            }),
        })
    }

    /// Replaces `corpus` by step `step`'s streamed batch (no-op without a stream): the
    /// next `batch_size / P` usable groups of each part read here, part after part.
    fn load_stream_batch(&mut self, step: usize) -> Result<()> {
        let need = if self.cfg.run.objective == ViewKind::Good {
            2
        } else {
            1
        };
        let per_part = self.cfg.views.batch_size / self.cfg.data.stream_parts.max(1);
        let trim = self.cfg.views.trim;
        let tok = &self.tokenizer;
        let Some(src) = self.stream.as_mut() else {
            return Ok(());
        };
        if src.next_step == step + 1 && !self.corpus.groups.is_empty() {
            // Already loaded (data-parallel replicas share the step's batch).
            return Ok(());
        }
        if step < src.next_step {
            src.parts.iter_mut().for_each(ShardStream::reset);
            src.next_step = 0;
            src.skipped = 0;
        }
        loop {
            let mut batch = Vec::with_capacity(per_part * src.parts.len());
            for part in &mut src.parts {
                let (groups, skipped) = draw_batch(part, tok, trim, per_part, need)?;
                batch.extend(groups);
                src.skipped += skipped;
            }
            src.next_step += 1;
            if src.next_step > step {
                self.corpus = TokenizedCorpus { groups: batch };
                return Ok(());
            }
        }
    }

    /// The view generators of step `step` and how many batch groups each serves: one for
    /// the whole batch; or, streaming P > 1 parts, one per part read here, a function of
    /// the seed, the part and the step alone, so that a part's views are the same on
    /// whichever node reads it (and the training the same for every node count).
    fn view_rngs(&self, step: usize) -> (Vec<rand_chacha::ChaCha8Rng>, usize) {
        let (seed, parts) = (self.cfg.run.seed, self.cfg.data.stream_parts);
        match &self.stream {
            Some(src) if parts > 1 => (
                (src.first..src.first + src.parts.len())
                    .map(|p| generator(part_seed(seed, parts, p), Stream::Views, step as u64))
                    .collect(),
                self.cfg.views.batch_size / parts,
            ),
            _ => (
                vec![generator(seed, Stream::Views, step as u64)],
                usize::MAX,
            ),
        }
    }

    /// This process's replica of a global worker `shard` (index `r W + k` of `N W` for
    /// replica `k` of node `r`), as a shard of the batch held here: the batch itself
    /// unless this node streams only its own parts, whose groups its `W` replicas split
    /// (replica `k` of `W`). Errors if the shard is not one of this node's.
    fn local_shard(&self, shard: Shard) -> Result<Shard> {
        let parts = self.cfg.data.stream_parts;
        let Some(src) = self.stream.as_ref().filter(|s| s.parts.len() < parts) else {
            return Ok(shard);
        };
        // Every node reads as many parts as this one (`streaming_parts` checks it).
        let nodes = parts / src.parts.len();
        let rank = src.first / src.parts.len();
        let w = shard.count / nodes;
        if w == 0 || !shard.count.is_multiple_of(nodes) || shard.index / w != rank {
            return Err(Error::invalid(format!(
                "worker {} of {} is not one of node {rank}'s (this node streams parts {}..{} \
                 of data.stream_parts = {parts}, i.e. is node {rank} of {nodes})",
                shard.index,
                shard.count,
                src.first,
                src.first + src.parts.len()
            )));
        }
        Ok(Shard {
            index: shard.index % w,
            count: w,
        })
    }

    /// Group indices of step `step`'s batch (without replacement when the corpus allows).
    fn batch_groups(&self, rng: &mut impl Rng) -> Vec<usize> {
        let (n, b) = (self.corpus.groups.len(), self.cfg.views.batch_size);
        if self.stream.is_some() {
            // The streamed batch is already a shuffled draw: take it whole, in order.
            (0..n).collect()
        } else if b <= n {
            sample(rng, n, b).into_vec()
        } else {
            (0..b).map(|_| rng.random_range(0..n)).collect()
        }
    }

    fn jepa_step<B: AutodiffBackend>(
        &self,
        model: &TextEncoder<B>,
        kind: ViewKind,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        let (views, items) = self.jepa_views(model, kind, step, Shard::WHOLE, device)?;
        // 3. Invariance + lambda * SIGReg.
        Ok(jepa_loss(
            &views,
            self.cfg.views.n_global,
            &self.cfg.loss,
            self.cfg.run.seed,
            step,
            device,
        )?
        .into_step_output(items))
    }

    /// Stages 1-2 of a JEPA step for `shard` of the batch: the `V` view embeddings
    /// (`[n, d]` each, `n` = the shard's groups) and the tokens processed. All groups'
    /// views are drawn (the stream's order does not depend on the shard), then the
    /// shard's are kept.
    fn jepa_views<B: AutodiffBackend>(
        &self,
        model: &TextEncoder<B>,
        kind: ViewKind,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<(Vec<Tensor<B, 2>>, usize)> {
        let (mut rngs, per) = self.view_rngs(step);
        let groups = self.batch_groups(&mut rngs[0]);
        let cls = uses_cls(&self.spec).then_some(self.tokenizer.cls);
        let cap = self.spec.max_len - usize::from(cls.is_some());
        // 1. Views: per sample, V spans; stored view-major so rows v*n..(v+1)*n are view v.
        let per_sample = groups
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                sample_views(
                    &self.corpus,
                    g,
                    kind,
                    &self.cfg.views,
                    cap,
                    self.tokenizer.mask,
                    &mut rngs[i / per],
                )
            })
            .collect::<Result<Vec<_>>>()?;
        let per_sample = shard.take(per_sample);
        let (n, v) = (
            per_sample.len(),
            self.cfg.views.n_global + self.cfg.views.n_local,
        );
        let rows: Vec<&[u32]> = (0..v)
            .flat_map(|j| per_sample.iter().map(move |s| s[j].tokens.as_slice()))
            .collect();
        let items = rows.iter().map(|r| r.len()).sum();
        // 2. Forward: one batch of V*n sequences.
        let (ids, pad) = padded_tensors::<B>(&pad_rows(&rows, cls, self.tokenizer.pad), device);
        let z = model.embed(ids, pad); // (V*n, d)
        let views: Vec<Tensor<B, 2>> = (0..v).map(|j| z.clone().narrow(0, j * n, n)).collect();
        Ok((views, items))
    }

    fn next_token_step<B: AutodiffBackend>(
        &self,
        model: &TextEncoder<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        let (nll, count, items) = self.next_token_nll(model, step, Shard::WHOLE, device)?;
        let ce = nll / count;
        Ok(StepOutput {
            loss: ce.clone(),
            terms: vec![("ce", ce)],
            items,
            embedding_std: None,
        })
    }

    /// Stages 1-2 of a next-token step for `shard` of the batch: the summed negative
    /// log-likelihood of the real (non-pad) targets `[1]`, their count as a tensor `[1]`,
    /// and as a number.
    fn next_token_nll<B: AutodiffBackend>(
        &self,
        model: &TextEncoder<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<(Tensor<B, 1>, Tensor<B, 1>, usize)> {
        let (mut rngs, per) = self.view_rngs(step);
        let groups = self.batch_groups(&mut rngs[0]);
        // 1. One text per group, `[CLS]` as BOS: input seq[..-1], target seq[1..].
        let seqs: Vec<Vec<u32>> = groups
            .iter()
            .enumerate()
            .map(|(i, &g)| {
                let texts = &self.corpus.groups[g];
                let t = &texts[rngs[i / per].random_range(0..texts.len())];
                let take = t.len().min(self.spec.max_len);
                std::iter::once(self.tokenizer.cls)
                    .chain(t[..take].iter().copied())
                    .collect()
            })
            .collect();
        let seqs = shard.take(seqs);
        let inputs: Vec<&[u32]> = seqs.iter().map(|s| &s[..s.len() - 1]).collect();
        let targets: Vec<&[u32]> = seqs.iter().map(|s| &s[1..]).collect();
        let pin = pad_rows(&inputs, None, self.tokenizer.pad);
        let (ids, pad) = padded_tensors::<B>(&pin, device);
        // 2-3. Forward and cross-entropy over the real targets only.
        let (nll, items) = model.lm_nll(ids, pad, &targets)?;
        let count = Tensor::from_floats([items as f32], device);
        Ok((nll, count, items))
    }
}

impl<B: AutodiffBackend> TrainTask<B> for TextTask {
    type Model = TextEncoder<B>;

    fn init_model(&self, device: &B::Device) -> Result<TextEncoder<B>> {
        self.spec.init(device)
    }

    fn step(
        &mut self,
        model: &TextEncoder<B>,
        step: usize,
        device: &B::Device,
    ) -> Result<StepOutput<B>> {
        self.load_stream_batch(step)?;
        match self.cfg.run.objective {
            kind @ (ViewKind::Good | ViewKind::Bad) => self.jepa_step(model, kind, step, device),
            ViewKind::NextToken => self.next_token_step(model, step, device),
        }
    }

    /// Loads step `step`'s batch from the stream, if the task streams one.
    fn prepare_step(&mut self, step: usize) -> Result<()> {
        self.load_stream_batch(step)
    }

    /// The shard's views and forward pass (JEPA), or its summed cross-entropy
    /// (next-token); the batch is split as [`Shard::take`] says.
    fn shard_step(
        &self,
        model: &TextEncoder<B>,
        step: usize,
        shard: Shard,
        device: &B::Device,
    ) -> Result<ShardOutput<B>> {
        check_split(shard.count, self.cfg.views.batch_size)?;
        let shard = self.local_shard(shard)?;
        let kind = match self.cfg.run.objective {
            kind @ (ViewKind::Good | ViewKind::Bad) => kind,
            ViewKind::NextToken => {
                let (sum, _, count) = self.next_token_nll(model, step, shard, device)?;
                return Ok(ShardOutput {
                    loss: ShardLoss::Mean {
                        name: "ce",
                        sum,
                        count,
                    },
                    items: count,
                });
            }
        };
        let (views, items) = self.jepa_views(model, kind, step, shard, device)?;
        Ok(ShardOutput {
            loss: ShardLoss::Jepa {
                views,
                n_global: self.cfg.views.n_global,
                loss: self.cfg.loss.clone(),
                seed: self.cfg.run.seed,
            },
            items,
        })
    }

    /// Mutual k-NN and linear CKA between the held-out texts' embeddings and the target;
    /// the `pair_*` scores of their first vs second texts ([`PairScores`]).
    async fn evaluate(
        &mut self,
        model: &TextEncoder<B::InnerBackend>,
        _step: usize,
    ) -> Result<Vec<(String, f64)>> {
        let Some(eval) = &self.eval else {
            return Ok(Vec::new());
        };
        let device = model.devices().into_iter().next().unwrap_or_default();
        let embed = |texts: &[String], name: &str| -> Result<Features> {
            let z = embed_texts(model, &self.spec, &self.tokenizer, texts, 256, &device)?;
            Features::new(
                name,
                texts.len(),
                1,
                self.spec.d_model,
                z.iter().map(|&x| f64::from(x)).collect(),
            )
        };
        let ours = embed(&eval.texts, "embeddings")?;
        let mut out = Vec::new();
        if let Some(target) = &eval.target {
            let opts = MetricOptions {
                k: eval.k,
                null_shuffles: 0,
                ..MetricOptions::default()
            };
            let r = measure(&ours, target, &opts)?;
            out.push(("mutual_knn".into(), r.scores.mutual_knn));
            out.push(("cka".into(), r.scores.cka));
        }
        if !eval.partners.is_empty() {
            let theirs = embed(&eval.partners, "second texts")?;
            let opts = MetricOptions {
                k: eval.k,
                ..MetricOptions::default()
            };
            let p = PairScores::of(&ours, &theirs, &opts)?;
            out.extend([
                ("pair_mutual_knn".into(), p.mutual_knn),
                ("pair_cka".into(), p.cka),
                ("pair_r1".into(), p.r1),
                ("pair_r5".into(), p.r5),
            ]);
        }
        Ok(out)
    }

    fn best_metric(&self) -> Option<&str> {
        // The cross-model score when there is a target, else caption vs caption.
        self.eval.as_ref().map(|e| {
            if e.target.is_some() {
                "mutual_knn"
            } else {
                "pair_mutual_knn"
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn defaults_follow_the_paper_recipe() {
        let c = TrainConfig::from_toml("t", "", &[]).unwrap();
        assert_eq!(c.loss.lambda, 0.02);
        assert_eq!(c.optim.lr, 5e-4);
        assert_eq!(c.optim.weight_decay, 0.05);
        assert_eq!((c.views.n_global, c.views.n_local), (2, 6));
        assert_eq!((c.loss.t_max, c.loss.knots), (3.0, 17));
    }

    /// The typed values (`model.size`, `model.pooling`, `run.objective`) refuse unknown
    /// names, naming the field and the valid names.
    #[test]
    fn typed_values_name_field_and_choices() {
        for (set, field, valid) in [
            ("model.size=\"bert-x\"", "size", "bert-s"),
            ("model.pooling=\"max\"", "pooling", "cls"),
            ("run.objective=\"great\"", "objective", "next-token"),
            ("data.source=\"csv\"", "source", "shards"),
        ] {
            let e = TrainConfig::from_toml("cfg.toml", "", &[set.into()])
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("cfg.toml") && e.contains(field) && e.contains(valid),
                "{set}: {e}"
            );
        }
    }

    #[test]
    fn overrides_and_round_trip() {
        let c = TrainConfig::from_toml(
            "t",
            "[run]\nobjective = \"bad\"\n",
            &[
                "optim.lr=1e-4".into(),
                "data.lang=de".into(),
                "model.size=\"bert-s\"".into(),
            ],
        )
        .unwrap();
        assert_eq!(c.run.objective, ViewKind::Bad);
        assert_eq!(c.optim.lr, 1e-4);
        assert_eq!(c.data.lang, "de");
        assert_eq!(c.model.dims(), (384, 12, 6, 1536));
        let back = TrainConfig::from_toml("t", &c.to_toml().unwrap(), &[]).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn errors_name_the_field() {
        let e = TrainConfig::from_toml("cfg.toml", "[optim]\nlr = \"x\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cfg.toml") && e.contains("lr"), "{e}");
        let e = TrainConfig::from_toml("cfg.toml", "[views]\nmask_ratio = 1.5\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("views.mask_ratio"), "{e}");
        let e = TrainConfig::from_toml("cfg.toml", "[run]\nnope = 1\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("nope"), "{e}");
        // An unknown objective is refused, naming the field and the valid ones.
        let e = TrainConfig::from_toml("cfg.toml", "[loss]\nkind = \"vicreg\"\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cfg.toml") && e.contains("kind") && e.contains("spectral"),
            "{e}"
        );
        let c = TrainConfig::from_toml("cfg.toml", "[loss]\nkind = \"spectral\"\n", &[]).unwrap();
        assert_eq!(c.loss.kind, crate::train::config::LossKind::Spectral);
        let e = TrainConfig::from_toml(
            "cfg.toml",
            "[run]\nplateau_window = 5\nplateau_tol = 0\n",
            &[],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("run.plateau_tol"), "{e}");
    }

    #[test]
    fn unknown_keys_name_the_nearest_valid_one() {
        let e = TrainConfig::from_toml("cfg.toml", "[optim]\nlrr = 1e-3\n", &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`lrr`") && e.contains("did you mean `lr`?"),
            "{e}"
        );
        let e = TrainConfig::from_toml("cfg.toml", "[optimiser]\nlr = 1e-3\n", &[])
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `optim`?"), "{e}");
        // Nothing close: no guess, the list of valid keys stays.
        let e = TrainConfig::from_toml("cfg.toml", "[optim]\nlearning_rate = 1\n", &[])
            .unwrap_err()
            .to_string();
        assert!(!e.contains("did you mean") && e.contains("`lr`"), "{e}");
    }

    use super::*;
    use crate::models::text_encoder::Pooling;
    use crate::text::corpus::Group;
    use crate::text::tokenizer::TokenizerConfig;
    use crate::train::{MemorySink, train};
    use burn::backend::{Autodiff, NdArray};

    /// 40 groups of 3 paraphrases: (colour, animal, action) is the state.
    fn toy_groups() -> Vec<Group> {
        let colours = ["red", "blue", "green", "black", "white"];
        let animals = ["dog", "cat", "horse", "bird"];
        let actions = ["runs", "sleeps"];
        let mut out = Vec::new();
        for (i, c) in colours.iter().enumerate() {
            for (j, a) in animals.iter().enumerate() {
                for (k, v) in actions.iter().enumerate() {
                    out.push(Group {
                        id: format!("{i}{j}{k}"),
                        texts: vec![
                            format!("a {c} {a} {v} in the park"),
                            format!("the {a} that is {c} {v} today"),
                            format!("look , one {c} {a} {v} there"),
                        ],
                    });
                }
            }
        }
        out
    }

    fn task(objective: &str) -> TextTask {
        let text = format!(
            "[run]\nobjective = \"{objective}\"\nsteps = 50\nlog_every = 1\n\
             [model]\nmax_len = 16\n[views]\nbatch_size = 16\n[loss]\nslices = 32\n\
             [optim]\nwarmup_steps = 5\nlr = 2e-3\n"
        );
        let cfg = TrainConfig::from_toml("toy.toml", &text, &[]).unwrap();
        let groups = toy_groups();
        let tcfg = TokenizerConfig {
            vocab_size: 100,
            min_frequency: 1,
            ..TokenizerConfig::default()
        };
        let tok = TextTokenizer::train(
            groups
                .iter()
                .flat_map(|g| g.texts.iter().map(String::as_str)),
            &tcfg,
        )
        .unwrap();
        TextTask::new(cfg, tok, &groups).unwrap()
    }

    fn mean_loss(sink: &MemorySink, range: std::ops::Range<usize>) -> f64 {
        let v: Vec<f64> = sink.records[range]
            .iter()
            .map(|r| r["loss"].as_f64().unwrap())
            .collect();
        v.iter().sum::<f64>() / v.len() as f64
    }

    /// The batch input every embedding path uses: texts cut to the context (one less with
    /// [CLS], which then comes first), padded to the longest, counts before the cut.
    #[test]
    fn tokenize_batch_cuts_to_the_context_and_counts_before_the_cut() {
        let tok = TextTokenizer::train(
            ["a b c d e f g h", "a b"].into_iter(),
            &TokenizerConfig {
                vocab_size: 60,
                min_frequency: 1,
                ..TokenizerConfig::default()
            },
        )
        .unwrap();
        let texts = ["a b c d e f g h".to_string(), "a b".to_string()];
        for (cls, max_len) in [(false, 5), (true, 5)] {
            let model = ModelConfig {
                max_len,
                pooling: if cls { Pooling::Cls } else { Pooling::Mean },
                ..ModelConfig::default()
            };
            let spec = EncoderSpec::from_config(&model, tok.vocab_size(), false).unwrap();
            let (p, counts) = tokenize_batch(&tok, &spec, &texts).unwrap();
            assert_eq!(counts, [8, 2]);
            assert_eq!(context_tokens(&spec), max_len - usize::from(cls));
            assert_eq!((p.n, p.len), (2, max_len), "cls {cls}");
            assert_eq!(p.ids[0] == i64::from(tok.cls), cls);
            // The short text is padded after its own tokens.
            let kept = 2 + usize::from(cls);
            assert!(p.pad[p.len + kept..2 * p.len].iter().all(|&x| x));
            assert!(p.pad[p.len..p.len + kept].iter().all(|&x| !x));
        }
    }

    #[test]
    fn tiny_encoder_loss_falls_over_50_steps() {
        for objective in ["good", "next-token"] {
            let mut t = task(objective);
            let cfg = t.cfg.clone();
            let mut sink = MemorySink::default();
            let device = Default::default();
            train::<Autodiff<NdArray>, _>(
                &mut t, &cfg.run, &cfg.optim, "", None, &mut sink, &device,
            )
            .unwrap();
            let (first, last) = (mean_loss(&sink, 0..10), mean_loss(&sink, 40..50));
            eprintln!("{objective}: loss {first:.4} -> {last:.4}");
            assert!(last < 0.8 * first, "{objective}: loss {first} -> {last}");
        }
    }

    /// The toy groups as two gzip JSONL shards plus a plain one (with a one-text group,
    /// which good views must skip).
    fn toy_shards() -> Vec<(String, Vec<u8>)> {
        use std::io::Write;
        let lines: Vec<String> = toy_groups()
            .iter()
            .map(|g| serde_json::json!({"id": g.id, "texts": g.texts}).to_string() + "\n")
            .collect();
        let gz = |part: &[String]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(part.concat().as_bytes()).unwrap();
            e.finish().unwrap()
        };
        let mut plain = lines[30..].concat();
        plain.push_str("{\"id\": \"lonely\", \"texts\": [\"a lonely text\"]}\n");
        vec![
            ("s0.jsonl.gz".into(), gz(&lines[..15])),
            ("s1.jsonl.gz".into(), gz(&lines[15..30])),
            ("s2.jsonl".into(), plain.into_bytes()),
        ]
    }

    /// A streaming task on `base`'s config and tokenizer (shared: WordPiece training can
    /// break ties differently from one training to the next).
    fn stream_task(base: &TextTask, steps: usize) -> TextTask {
        let mut cfg = base.cfg.clone();
        cfg.run.steps = steps;
        cfg.run.checkpoint_every = 3;
        let stream = ShardStream::from_memory(toy_shards(), 8, cfg.run.seed).unwrap();
        TextTask::streaming(cfg, base.tokenizer.clone(), stream).unwrap()
    }

    /// `data.stream_parts = 2`: a process reading both parts holds, step after step, the
    /// groups of node 0 (part 0) followed by those of node 1 (part 1), each node reading
    /// only its part's shards, and a node's replicas are its own workers' shards.
    #[test]
    fn stream_parts_split_the_batch_between_nodes() {
        let base = task("good");
        let mut cfg = base.cfg.clone();
        cfg.data.source = crate::text::corpus::DataSource::Shards;
        cfg.data.stream_parts = 2;
        cfg.validate("test").unwrap();
        let seed = cfg.run.seed;
        let part = |p: usize| {
            let files = crate::text::shards::deal(&toy_shards(), 2, p);
            ShardStream::from_memory(files, 8, part_seed(seed, 2, p)).unwrap()
        };
        let tok = || base.tokenizer.clone();
        let mut whole =
            TextTask::streaming_parts(cfg.clone(), tok(), vec![part(0), part(1)], 0).unwrap();
        let mut nodes = [
            TextTask::streaming_parts(cfg.clone(), tok(), vec![part(0)], 0).unwrap(),
            TextTask::streaming_parts(cfg.clone(), tok(), vec![part(1)], 1).unwrap(),
        ];
        for step in [0, 1, 2, 5, 3] {
            whole.load_stream_batch(step).unwrap();
            let mut joined = Vec::new();
            for n in &mut nodes {
                n.load_stream_batch(step).unwrap();
                assert_eq!(n.corpus.groups.len(), cfg.views.batch_size / 2);
                joined.extend(n.corpus.groups.clone());
            }
            assert_eq!(whole.corpus.groups, joined, "step {step}");
        }
        // Each part's view generator is the same on either side.
        let (mut w, per) = whole.view_rngs(4);
        let (mut n1, _) = nodes[1].view_rngs(4);
        assert_eq!(per, cfg.views.batch_size / 2);
        assert_eq!(w[1].random::<u64>(), n1[0].random::<u64>());
        // Worker 3 of 4 (2 nodes x 2 replicas) is node 1's replica 1; worker 1 is not node 1's.
        let s = nodes[1].local_shard(Shard { index: 3, count: 4 }).unwrap();
        assert_eq!(s, Shard { index: 1, count: 2 });
        let e = nodes[1]
            .local_shard(Shard { index: 1, count: 4 })
            .unwrap_err();
        assert!(e.to_string().contains("not one of node 1's"), "{e}");
        assert_eq!(
            whole
                .local_shard(Shard { index: 1, count: 4 })
                .unwrap()
                .index,
            1
        );
        // A share that is not a node's is refused.
        assert!(TextTask::streaming_parts(cfg.clone(), tok(), vec![part(1)], 2).is_err());
        let mut bad = cfg.clone();
        bad.data.stream_parts = 5;
        let e = bad.validate("t.toml").unwrap_err().to_string();
        assert!(
            e.contains("data.stream_parts") && e.contains("do not divide"),
            "{e}"
        );
    }

    /// Streams shards through training (epochs, skipping, bounded buffer). Exact resume of
    /// a streamed run is checked in `tests/resume_exact.rs`, a process of its own: burn's
    /// init RNG is process-wide, and other unit tests draw from it concurrently.
    #[test]
    fn streamed_shards_train() {
        type AB = Autodiff<NdArray>;
        let device = Default::default();
        // 6 steps of 16 groups: 96 draws over 41 groups (2+ epochs).
        let base = task("good");
        let mut t = stream_task(&base, 6);
        let cfg = t.cfg.clone();
        let mut full = MemorySink::default();
        train::<AB, _>(&mut t, &cfg.run, &cfg.optim, "", None, &mut full, &device).unwrap();
        assert_eq!(full.records.len(), 6);
        assert!(
            full.records
                .iter()
                .all(|r| r["loss"].as_f64().is_some_and(f64::is_finite))
        );
        let src = t.stream.as_ref().unwrap();
        assert!(src.parts[0].epoch() >= 2, "epoch {}", src.parts[0].epoch());
        assert!(src.skipped >= 2, "the one-text group is skipped each epoch");
        assert!(src.parts[0].peak_buffered() <= 8);
    }

    #[test]
    fn embed_texts_matches_batching() {
        let t = task("good");
        let device = Default::default();
        let model: TextEncoder<NdArray> = t.spec.init(&device).unwrap();
        let texts: Vec<String> = toy_groups()
            .iter()
            .take(5)
            .map(|g| g.texts[0].clone())
            .collect();
        let a = embed_texts(&model, &t.spec, &t.tokenizer, &texts, 5, &device).unwrap();
        let b = embed_texts(&model, &t.spec, &t.tokenizer, &texts, 2, &device).unwrap();
        assert_eq!(a.len(), 5 * t.spec.d_model);
        let diff = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f32::max);
        assert!(diff < 1e-5, "batching changed embeddings by {diff}");
    }
}
