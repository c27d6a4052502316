//! Bytes from every rank to rank 0, in rank order and in pieces: how the ranks' shards of a
//! final-states file or a trajectory frame become one file written by rank 0 alone.
//!
//! A gather rather than parallel writes at each rank's offset: it needs no file system
//! shared by the nodes, works for CSV (whose rows have no fixed length, so no rank knows its
//! offset) as for `.npy`, and costs rank 0 one receive per piece; the file is written at the
//! speed of rank 0's disk either way.

use std::io::{self, Write};

use ::mpi::traits::*;

/// Bytes a piece holds at most: large enough that the per-message latency is noise, small
/// enough that no rank holds much more than its encoder's batch.
const PIECE: usize = 4 << 20;

/// Writes this rank's bytes, made by `own`, and on rank 0 every other rank's after its own,
/// in rank order, to `sink` (used on rank 0 only). Every rank must call it.
///
/// Rank 0 keeps receiving after a write error, so that no rank is left waiting to send, and
/// returns the first error; a rank whose `own` fails still ends its part. Follow the call
/// with an agreement on the outcome ([`agree`](super::agree::agree)) before committing
/// anything: a part may be incomplete.
pub(crate) fn bytes_to_root<C: Communicator>(
    comm: &C,
    sink: &mut dyn Write,
    own: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    if comm.rank() != 0 {
        let mut sender = PieceSender {
            comm,
            piece: Vec::with_capacity(PIECE),
        };
        let made = own(&mut sender);
        let sent = sender.flush();
        // The empty piece ends this rank's part, whatever happened.
        comm.process_at_rank(0).send(&[0u8; 0][..]);
        return made.and(sent);
    }
    let mut written = own(sink);
    for rank in 1..comm.size() {
        let from = comm.process_at_rank(rank);
        loop {
            let (piece, _) = from.receive_vec::<u8>();
            if piece.is_empty() {
                break;
            }
            if written.is_ok() {
                written = sink.write_all(&piece);
            }
        }
    }
    written
}

/// `bytes` of rank `root` on every rank: its length, then (if any) its bytes.
pub(crate) fn broadcast_bytes<C: Communicator>(comm: &C, root: usize, bytes: &mut Vec<u8>) {
    let root = comm.process_at_rank(root as i32);
    let mut len = bytes.len() as u64;
    root.broadcast_into(&mut len);
    bytes.resize(len as usize, 0);
    // MPI refuses the dangling pointer of an empty buffer.
    if len > 0 {
        root.broadcast_into(&mut bytes[..]);
    }
}

/// Sends what is written to rank 0 in pieces of [`PIECE`] bytes.
struct PieceSender<'c, C: Communicator> {
    comm: &'c C,
    piece: Vec<u8>,
}

impl<C: Communicator> Write for PieceSender<'_, C> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let room = PIECE - self.piece.len();
        let taken = buf.len().min(room);
        self.piece.extend_from_slice(&buf[..taken]);
        if self.piece.len() == PIECE {
            self.flush()?;
        }
        Ok(taken)
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.piece.is_empty() {
            self.comm.process_at_rank(0).send(&self.piece[..]);
            self.piece.clear();
        }
        Ok(())
    }
}
