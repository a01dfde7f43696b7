//! One module per screen: each has its own state, its key handling and a pure render function.
//! A screen too big for one file keeps its state in `NAME.rs` and its parts in `NAME/`
//! (`train/`: form, progress, keys, render and the worker; `tracer/`: navigation, goto, quiz
//! keys and render).

pub(crate) mod attn_map;
pub(crate) mod checkpoint;
pub(crate) mod compare;
pub(crate) mod help;
pub(crate) mod lessons;
pub(crate) mod loading;
pub(crate) mod menu;
pub(crate) mod mine;
pub(crate) mod mistakes;
pub(crate) mod open;
pub(crate) mod picker;
pub(crate) mod prompt;
pub(crate) mod tracer;
pub(crate) mod traffic;
pub(crate) mod train;
