//! A channel bounded in bytes, between the proxy's reader and writer threads and its loop: what
//! keeps memory bounded however fast a peer writes and however slowly the other one reads.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError, mpsc};

/// What each message costs a channel's byte budget besides its bytes (so that a flood of tiny
/// messages is bounded too).
const MESSAGE_OVERHEAD: usize = 64;

/// A message and its share of its channel's byte budget, given back when it is dropped.
pub(super) struct Budgeted<T> {
    pub(super) item: T,
    pub(super) _share: OwnedSemaphorePermit,
}

/// A channel bounded in bytes: a message takes its length (and [`MESSAGE_OVERHEAD`]) from the
/// budget until the receiver drops it; one larger than the whole budget takes all of it.
#[derive(Clone)]
pub(super) struct Sender<T> {
    tx: mpsc::UnboundedSender<Budgeted<T>>,
    budget: Arc<Semaphore>,
    bytes: u32,
}

pub(super) type Receiver<T> = mpsc::UnboundedReceiver<Budgeted<T>>;

pub(super) fn channel<T>(bytes: usize) -> (Sender<T>, Receiver<T>) {
    let bytes = u32::try_from(bytes.max(MESSAGE_OVERHEAD)).unwrap_or(u32::MAX);
    let (tx, rx) = mpsc::unbounded_channel();
    (Sender { tx, budget: Arc::new(Semaphore::new(bytes as usize)), bytes }, rx)
}

/// Why a message was not queued.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SendError {
    /// The budget is spent: the receiver is not keeping up (only from `try_send`).
    Full,
    Closed,
}

impl<T> Sender<T> {
    fn share(&self, len: usize) -> u32 {
        u32::try_from(len.saturating_add(MESSAGE_OVERHEAD)).unwrap_or(u32::MAX).min(self.bytes)
    }

    /// Waits for room in the budget, then queues.
    pub(super) async fn send(&self, item: T, len: usize) -> Result<(), SendError> {
        let share = self.budget.clone().acquire_many_owned(self.share(len)).await.map_err(|_| SendError::Closed)?;
        self.tx.send(Budgeted { item, _share: share }).map_err(|_| SendError::Closed)
    }

    /// Queues only if the budget has room now.
    pub(super) fn try_send(&self, item: T, len: usize) -> Result<(), SendError> {
        let share = self.budget.clone().try_acquire_many_owned(self.share(len)).map_err(|e| match e {
            TryAcquireError::NoPermits => SendError::Full,
            TryAcquireError::Closed => SendError::Closed,
        })?;
        self.tx.send(Budgeted { item, _share: share }).map_err(|_| SendError::Closed)
    }

    /// From a thread outside the runtime.
    pub(super) fn blocking_send(&self, item: T, len: usize, runtime: &tokio::runtime::Handle) -> Result<(), SendError> {
        runtime.block_on(self.send(item, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn channels_are_bounded_in_bytes_and_a_full_one_says_so() {
        let (tx, mut rx) = channel::<Vec<u8>>(1000);
        tx.try_send(vec![0; 600], 600).unwrap();
        assert_eq!(tx.try_send(vec![0; 600], 600), Err(SendError::Full), "600 + 600 bytes exceed 1000");
        tx.try_send(vec![0; 100], 100).unwrap();
        let first = rx.recv().await.unwrap();
        assert_eq!(tx.try_send(vec![0; 600], 600), Err(SendError::Full), "held until dropped");
        drop(first);
        tx.try_send(vec![0; 600], 600).unwrap();
        // One message larger than the whole budget takes all of it, and waits for an empty channel.
        drop(rx.recv().await);
        drop(rx.recv().await);
        tx.try_send(vec![0; 5000], 5000).unwrap();
        assert_eq!(tx.try_send(vec![0], 1), Err(SendError::Full));
        drop(rx);
        // The receiver gone, what it held is dropped and given back: the sender learns it is closed.
        assert_eq!(tx.send(vec![0], 1).await, Err(SendError::Closed));
    }
}
