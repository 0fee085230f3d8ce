// The service as operators run it (`stableroute serve`, simulated chains): its workers reconcile on their own every
// RECONCILE_INTERVAL_SECONDS and keep the history, and a treasury below its gas low-water mark shows as a degraded
// chain and one low_gas alert, POSTed to OPERATOR_WEBHOOK_URL with a valid signature.
import { describe, expect, it } from 'vitest';
import { freePort, waitFor, waitHealthy } from '../helpers/process.js';
import { serviceFixture } from '../helpers/service-fixture.js';

const SECRET = 'e2e-operator-alert-secret-0123456789';

const fx = serviceFixture(SECRET);

describe('operator alerts and reconciliation in a running service', () => {
  it('reconciles periodically and raises one low_gas alert, sent signed', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const service = fx.start(['serve'], {
      DATABASE_URL: fx.db.url,
      PORT: String(port),
      HOST: '127.0.0.1',
      RECONCILE_INTERVAL_SECONDS: '1',
      HEALTH_COLLECT_SECONDS: '0.2',
      WEBHOOK_POLL_SECONDS: '0.2',
      // The simulated Ethereum treasury holds 100 ETH: below a mark of 1000.
      ETHEREUM_GAS_LOW_WATER: '1000',
      OPERATOR_WEBHOOK_URL: fx.receiver.url,
      OPERATOR_WEBHOOK_SECRET: SECRET,
    });
    await waitHealthy(base, service);
    const history = await waitFor('two reconciliation runs', async () => {
      const page = (await (await fetch(`${base}/admin/reconciliations?chain=ethereum`)).json()) as { data: { status: string }[] };
      return page.data.length >= 2 && page.data;
    });
    expect(history.every((r) => r.status === 'ok')).toBe(true);

    const delivered = await waitFor('the low_gas alert at the operator receiver', async () => fx.receiver.events.length > 0 && fx.receiver.events);
    expect(fx.receiver.badSignatures).toBe(0);
    expect(delivered[0]).toMatchObject({ event_type: 'alert.raised', alert: { kind: 'low_gas', chain: 'ethereum', status: 'open' } });
    const alerts = (await (await fetch(`${base}/admin/alerts`)).json()) as { data: { kind: string; chain: string; status: string }[] };
    expect(alerts.data).toEqual([expect.objectContaining({ kind: 'low_gas', chain: 'ethereum', status: 'open' })]);
    const overview = (await (await fetch(`${base}/admin/overview`)).json()) as { chain_health: { chain: string; health_status: string; status_reason: string | null }[] };
    expect(overview.chain_health.find((s) => s.chain === 'ethereum')).toMatchObject({ health_status: 'degraded', status_reason: expect.stringMatching(/^low_gas: /) });
    expect(overview.chain_health.find((s) => s.chain === 'solana')).toMatchObject({ status_reason: null });
    // Still one alert, however many collections saw it: wait for three more low-gas snapshots after the delivery (each
    // a collection that found the gas low and could have raised it again), then count.
    const lowGasSnapshots = async () =>
      (
        await fx.db.pool.query<{ n: number }>(
          "SELECT COUNT(*)::int AS n FROM chain_health_snapshots WHERE chain = 'ethereum' AND source = 'collector' AND status_reason LIKE 'low_gas:%'",
        )
      ).rows[0]!.n;
    const seen = await lowGasSnapshots();
    await waitFor('three more collections of the low gas', async () => (await lowGasSnapshots()) >= seen + 3);
    expect(fx.receiver.events.filter((e) => e.event_type === 'alert.raised')).toHaveLength(1);

    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
  });
});
