//! Everything computed from a trace, below the UI: the one place each question a panel,
//! `explain` or a test asks of the event log is answered, so the TUI, the CLI and the display
//! oracle cannot disagree.
//!
//! - [`accum`]: the sum of products an event takes part in: its terms, what it starts from,
//!   the old value of a `+=`, the scale, and the chain `old + Σ × scale = new`.
//! - [`export`]: the events written out fast: JSON Lines, CSV, and the address traces `din` and lackey.
//! - [`parquet_export`]: the same events as typed Parquet columns, a nullable one per loop name.
//! - [`explain`]: the whiteboard walkthrough of one score element (`attn-trace explain`).
//! - [`flash_cell`]: where one probability of a FlashAttention trace lives in its tiles (the one
//!   tile lookup, [`flash_cell::TileSpot`]), and its chains: `e^(S − lse)`, `dP`, `dS`.
//! - [`hand`]: arithmetic a learner redoes by hand: each chain's numbers printed with the
//!   digits that make it hold on a calculator.
//! - [`online_softmax`]: flash's row update: `m_old`, the scores, `P`, `l_old`, `l_new`, `m_new`;
//!   the output tile's `att = acc / l` and `lse = m + ln l`.
//! - [`softmax_row`]: one softmax row, forward (max, exponentials, sum, probabilities) and backward
//!   (`Σ dP·P`, `dS`).
//! - [`rope_pair`]: one rotation of a channel pair: its angle's cos and sin, the two values turned.
//! - [`scope`]: a loop variable's value at an event, and the enclosing iteration of a loop.
//! - [`gradcheck`]: the central finite difference beside a backward gradient.
//! - [`beside`]: a learner's trace beside the reference's, the two cursors paired by cell.
//! - [`grade`]: a learner's own kernel graded against the reference pass: results, accesses,
//!   the first divergence and the gallery mistake it matches.
//! - [`traffic`]: reads and writes per buffer and memory level, counted and in closed form.
//! - [`cache`]: addresses for every buffer, and set-associative LRU caches the accesses run through.
//! - [`step`]: what the loop iteration around an event touched; flash's current tiles.
//! - [`mistakes`]: a mistaken run beside the correct one, and where they part.
//! - [`quiz`]: the quiz's question at the cursor, its answer with the working from the kernel
//!   line, and the check of a typed answer.
//! - [`formula`]: the docs' offset formulas, and the same with an event's numbers substituted.
//! - [`format`](mod@format): how numbers, masks and phases are written wherever a learner reads them.
//! - [`learner`]: the learner's own kernel beside ours: the inputs file, the trace format the
//!   recorders write and `grade` imports, the reference pass it is graded against.

pub mod accum;
pub mod beside;
pub mod cache;
mod element;
pub mod explain;
pub mod export;
pub mod flash_cell;
pub mod format;
pub mod formula;
pub mod gradcheck;
pub mod grade;
pub mod hand;
pub mod learner;
pub mod mistakes;
pub mod online_softmax;
pub mod parquet_export;
pub mod position;
pub mod quiz;
pub mod rope_pair;
pub mod scope;
pub mod softmax_row;
pub mod step;
pub mod traffic;

pub use element::Element;
