//! A transport that passes every frame on unchanged and shows it to the page first: the
//! session's JSON-RPC traffic, both directions, handshake included.

use std::io;
use std::sync::Arc;

use mcp_sdk::jsonrpc::transport::{
    Inbound, Outbound, ReadError, Transport, TransportKind, TransportRead, TransportWrite,
};

use super::hub::Hub;

/// `inner`, its frames told to the hub.
pub struct Tap<T> {
    /// The transport to the server.
    pub inner: T,
    /// Where the frames are told.
    pub hub: Arc<Hub>,
}

/// The reading half of a [`Tap`].
pub struct TapRead<R> {
    inner: R,
    hub: Arc<Hub>,
}

/// The writing half of a [`Tap`].
pub struct TapWrite<W> {
    inner: W,
    hub: Arc<Hub>,
}

impl<T: Transport> Transport for Tap<T> {
    type Read = TapRead<T::Read>;
    type Write = TapWrite<T::Write>;
    const KIND: TransportKind = T::KIND;

    fn split(self) -> (Self::Read, Self::Write) {
        let (read, write) = self.inner.split();
        (TapRead { inner: read, hub: self.hub.clone() }, TapWrite { inner: write, hub: self.hub })
    }
}

impl<R: TransportRead> TransportRead for TapRead<R> {
    async fn read(&mut self) -> Option<Result<Inbound, ReadError>> {
        let item = self.inner.read().await;
        if let Some(Ok(inbound)) = &item {
            self.hub.traffic("in", &inbound.frame);
        }
        item
    }
}

impl<W: TransportWrite> TransportWrite for TapWrite<W> {
    async fn write(&mut self, frames: &[Outbound]) -> io::Result<()> {
        for outbound in frames.iter().filter(|o| !o.frame.is_empty()) {
            self.hub.traffic("out", &outbound.frame);
        }
        self.inner.write(frames).await
    }

    async fn close(&mut self) -> io::Result<()> {
        self.inner.close().await
    }
}
