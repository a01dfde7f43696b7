//! One module per screen: each has its own state, its key handling and a pure render function.
//! A screen too big for one file keeps its state in `NAME.rs` and its parts in `NAME/`
//! (`train/`: form, progress, keys, render and the worker; `tracer/`: navigation, goto, quiz
//! keys and render).

pub mod attn_map;
pub mod checkpoint;
pub mod compare;
pub mod help;
pub mod lessons;
pub mod loading;
pub mod menu;
pub mod mine;
pub mod mistakes;
pub mod open;
pub mod picker;
pub mod prompt;
pub mod tracer;
pub mod traffic;
pub mod train;
