//! Every rank leaves a collective step with the same outcome: the first failure over the
//! ranks (in rank order, so the lowest crowd index among body faults), or success.

use ::mpi::traits::*;

use crate::model::error::{Error, Result};
use crate::model::fault::Fault;

/// Words each rank contributes: what happened, the crowd index of the body, the step, the
/// fault's code.
const WORDS: usize = 4;
const HEALTHY: u64 = 0;
const NON_FINITE: u64 = 1;
const OUTSIDE_ENVELOPE: u64 = 2;
const OTHER: u64 = 3;

/// Turns each rank's `local` outcome into one all ranks share (an all-gather of 32 bytes a
/// rank, and a broadcast of the message when the failure is not a body's). `first_body` is
/// the crowd index of this rank's first body: a body fault is reported by its crowd index.
/// The error names the rank it happened on ([`Error::OnRank`]); the failing rank keeps its
/// own error inside, the others carry its message.
pub(crate) fn agree<C: Communicator, T>(
    comm: &C,
    first_body: usize,
    local: Result<T>,
) -> Result<T> {
    let words = match &local {
        Ok(_) => [HEALTHY, 0, 0, 0],
        Err(Error::NonFinite { body, step }) => [NON_FINITE, (first_body + body) as u64, *step, 0],
        Err(Error::OutsideEnvelope { body, step, fault }) => [
            OUTSIDE_ENVELOPE,
            (first_body + body) as u64,
            *step,
            u64::from(fault.code()),
        ],
        Err(_) => [OTHER, 0, 0, 0],
    };
    let ranks = comm.size() as usize;
    let mut all = vec![0u64; WORDS * ranks];
    comm.all_gather_into(&words[..], &mut all[..]);
    let Some(rank) = (0..ranks).find(|r| all[r * WORDS] != HEALTHY) else {
        return local;
    };
    let theirs = &all[rank * WORDS..(rank + 1) * WORDS];
    let (body, step) = (theirs[1] as usize, theirs[2]);
    let error = match theirs[0] {
        NON_FINITE => Error::NonFinite { body, step },
        OUTSIDE_ENVELOPE => Error::OutsideEnvelope {
            body,
            step,
            fault: Fault::from_code(theirs[3] as u32).unwrap_or(Fault::NonFinitePosition),
        },
        _ => {
            let mine = comm.rank() as usize == rank;
            let mut text = match (&local, mine) {
                (Err(e), true) => e.to_string().into_bytes(),
                _ => Vec::new(),
            };
            super::gather::broadcast_bytes(comm, rank, &mut text);
            match local {
                Err(e) if mine => e,
                _ => Error::Mpi(String::from_utf8_lossy(&text).into_owned()),
            }
        }
    };
    Err(Error::OnRank {
        rank,
        ranks,
        error: Box::new(error),
    })
}
