//! One file per screen: each has its own state, its key handling and a pure render function.

pub mod attn_map;
pub mod checkpoint;
pub mod compare;
pub mod help;
pub mod loading;
pub mod menu;
pub mod mistakes;
pub mod open;
pub mod picker;
pub mod prompt;
pub mod tracer;
pub mod traffic;
pub mod train;
