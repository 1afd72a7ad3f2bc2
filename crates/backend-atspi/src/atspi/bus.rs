//! Finding and connecting the accessibility bus: the address the session
//! bus's `org.a11y.Bus` advertises (or one given), then a connection to it.

use std::future::Future;
use std::time::Duration;

use deskhand_backend::accessibility::BusProblem;

use super::calls::{Caller, Obj};
use super::error::AtspiError;
use crate::AtspiOptions;

/// A bus error with `problem` and what failed.
fn bus_error(problem: BusProblem, detail: impl std::fmt::Display) -> AtspiError {
    AtspiError::Bus {
        problem,
        detail: detail.to_string(),
    }
}

/// Runs `fut` for at most `timeout`; past it, fails with `problem`.
async fn bounded<T, E: std::fmt::Display>(
    timeout: Duration,
    problem: BusProblem,
    what: &str,
    fut: impl Future<Output = Result<T, E>>,
) -> Result<T, AtspiError> {
    match tokio::time::timeout(timeout, fut).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(bus_error(problem, format!("{what}: {e}"))),
        Err(_) => Err(bus_error(
            problem,
            format!("{what}: no answer within {} ms", timeout.as_millis()),
        )),
    }
}

/// Opens a connection to the bus at `address`.
async fn open_address(address: &str) -> zbus::Result<zbus::Connection> {
    zbus::connection::Builder::address(address)?.build().await
}

/// The accessibility bus address the session bus advertises.
async fn advertised_address(
    options: &AtspiOptions,
    timeout: Duration,
) -> Result<String, AtspiError> {
    let problem = BusProblem::NotAdvertised;
    let session = match &options.session_bus {
        Some(address) => bounded(timeout, problem, "session bus", open_address(address)).await?,
        None => bounded(timeout, problem, "session bus", zbus::Connection::session()).await?,
    };
    let call = session.call_method(
        Some("org.a11y.Bus"),
        "/org/a11y/bus",
        Some("org.a11y.Bus"),
        "GetAddress",
        &(),
    );
    let reply = bounded(timeout, problem, "org.a11y.Bus.GetAddress", call).await?;
    reply
        .body()
        .deserialize::<String>()
        .map_err(|e| bus_error(problem, format!("org.a11y.Bus.GetAddress: {e}")))
}

/// Connects the accessibility bus: the address given, else
/// `$AT_SPI_BUS_ADDRESS`, else the one the session bus advertises.
pub(crate) async fn connect(
    options: &AtspiOptions,
    timeout: Duration,
) -> Result<zbus::Connection, AtspiError> {
    let given = options
        .a11y_bus
        .clone()
        .or_else(|| std::env::var("AT_SPI_BUS_ADDRESS").ok())
        .filter(|a| !a.is_empty());
    let address = match given {
        Some(a) => a,
        None => advertised_address(options, timeout).await?,
    };
    tracing::debug!(%address, "connecting the accessibility bus");
    let what = "accessibility bus";
    bounded(
        timeout,
        BusProblem::Unreachable,
        what,
        open_address(&address),
    )
    .await
}

/// Checks that the registry answers on `conn`: how many apps it lists.
pub(crate) async fn check_registry(caller: &Caller) -> Result<usize, AtspiError> {
    caller
        .children(&Obj::registry_root())
        .await
        .map(|apps| apps.len())
        .map_err(|e| bus_error(BusProblem::Unreachable, format!("the registry: {e}")))
}

/// Opens a direct connection to the app serving `app` (its own socket,
/// from `GetApplicationBusAddress`).
pub(crate) async fn open_peer(
    caller: &Caller,
    app: &Obj,
    timeout: Duration,
) -> Result<zbus::Connection, AtspiError> {
    let address = caller.app_bus_address(app).await?;
    let open = async {
        zbus::connection::Builder::address(address.as_str())?
            .p2p()
            .build()
            .await
    };
    match tokio::time::timeout(timeout, open).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(AtspiError::Unable(format!("the app's own socket: {e}"))),
        Err(_) => Err(AtspiError::Timeout {
            what: "connecting the app's own socket",
            after: timeout,
        }),
    }
}
