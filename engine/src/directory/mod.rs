//! The filesystem boundary: memory maps and page-cache advice (the crate's only
//! `unsafe`), durable and atomic writes, and the writer's lock file.

mod atomic;
mod cache;
mod lock;
mod mmap;

#[cfg(test)]
pub(crate) use atomic::take_synced_dirs;
pub(crate) use atomic::{atomic_replace, fsync_dir};
pub(crate) use cache::drop_cached_pages;
pub(crate) use lock::{DirLock, LOCK_FILE};
pub(crate) use mmap::MappedFile;
