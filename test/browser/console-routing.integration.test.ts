import type { Page } from 'playwright-core';
import { expect, it } from 'vitest';
import { EventStreams } from '../../src/server/api/event-streams.js';
import { freshInvoice, proposeViaApi, serverHarness } from '../server/support/server-harness.js';
import { axeViolations, describeInChromium, liveInboxOpen } from './support/chromium.js';
import { consoleInChromium } from './support/console-in-chromium.js';

describeInChromium('the routing admin page in Chromium', () => {
  const streams = new EventStreams({ pollMs: 100 });
  const s = consoleInChromium('countersign-routing', () => serverHarness({ events: streams }));
  const submit = (page: Page, button: string) => s.submit(page, button, '/routing');

  it('an admin creates a group and a route; the route then decides who approves; every change is audited', async () => {
    const page = await s.context.newPage();
    await s.signIn(page, 'admin');
    await page.getByRole('link', { name: 'Routing' }).click();
    await page.waitForURL(`${s.h.url}/routing`);
    expect(await page.getByRole('heading', { name: 'Routing', level: 1 }).isVisible()).toBe(true);
    expect(await page.getByText('Create a group first').isVisible()).toBe(true);
    expect(await axeViolations(page)).toEqual([]);

    await page.getByLabel('Name', { exact: true }).fill('finance');
    await page.getByLabel('Members, one per line').fill('admin@acme.test\n');
    await submit(page, 'Save group');
    expect(await page.getByRole('status').textContent()).toContain('Saved.');
    expect(await page.getByLabel('Members of finance, one per line').inputValue()).toBe(
      'user:admin@acme.test',
    );

    await page.locator('#route-name').fill('payments over 1,000.00');
    await page.locator('#route-operation').selectOption('invoice.pay');
    await page.locator('#route-amountField').fill('amount_minor');
    await page.locator('#route-above').fill('100000');
    await page.locator('#route-group').selectOption('finance');
    await page.locator('#route-channel').fill('#finance-approvals');
    await page.locator('#route-position').fill('5');
    await submit(page, 'Create route');
    const [made] = await s.h.engine.routes.list('acme');
    expect(made?.position).toBe(5);
    // Edited in place: the same route, its fields filled in, one changed.
    await page.getByText('Edit route payments over 1,000.00').click();
    expect(await page.locator(`#route-${made!.id}-above`).inputValue()).toBe('100000');
    await page.locator(`#route-${made!.id}-channel`).fill('#finance');
    await submit(page, 'Save route payments over 1,000.00');
    expect((await s.h.engine.routes.list('acme'))[0]).toMatchObject({
      id: made!.id,
      channel: '#finance',
      position: 5,
    });
    await page.getByText('Edit route payments over 1,000.00').click();
    await page.locator(`#route-${made!.id}-channel`).fill('#finance-approvals');
    await submit(page, 'Save route payments over 1,000.00');
    const routes = page.getByRole('region', { name: 'Routes' });
    expect(await routes.textContent()).toContain('payments over 1,000.00');
    expect(await routes.textContent()).toContain('#finance-approvals');
    expect(await routes.textContent()).toContain('100,000 minor units');
    expect(await axeViolations(page)).toEqual([]);
    // On a 390 px phone the page does not widen: the tables scroll in their own regions.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(Number(await page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(390);
    expect(await axeViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 860 });

    // An escalation without its time is refused on the page, with its reason.
    await page.locator('#route-name').fill('broken');
    await page.locator('#route-escalationGroup').selectOption('finance');
    await submit(page, 'Create route');
    const refusal = await page.getByRole('alert').textContent();
    expect(refusal).toContain('$.escalation.afterMs');
    expect(refusal).toContain('invalid_request');

    // The route holds: the approver outside the finance group is refused on the route's account.
    const invoice = freshInvoice(s.h.world, 'acme', 500_000);
    const p = await proposeViaApi(s.h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
      resource: `invoice:${invoice}`,
    });
    expect(p['route']).toMatchObject({ group: 'finance' });
    const stored = (await s.h.engine.proposals.get('acme', p.id))!;
    expect(
      s.h.engine.proposals.mayDecide(
        { id: 'user:approver@acme.test', tenant: 'acme', kind: 'operator', roles: ['approver'] },
        stored,
      ),
    ).toMatchObject({ kind: 'refused', reason: 'forbidden' });

    // The proposal page names the route: its group, channel, and that only its members decide.
    await page.goto(`${s.h.url}/proposals/${p.id}`);
    const fact = await page.getByTestId('route').textContent();
    expect(fact).toContain('group finance');
    expect(fact).toContain('#finance-approvals');
    expect(fact).toContain('only its members decide');
    expect(await axeViolations(page)).toEqual([]);
    await page.goto(`${s.h.url}/routing`);

    const [route] = await s.h.engine.routes.list('acme');
    // Deleting the group is refused while the route names it; deleting the route, then the group, is not.
    await submit(page, 'Delete group finance');
    expect(await page.getByRole('alert').textContent()).toContain('names the group finance');
    await submit(page, 'Delete route payments over 1,000.00');
    await submit(page, 'Delete group finance');
    expect(await page.getByText('No routes: every proposal goes to every approver.').isVisible()).toBe(true);
    const changes = async (id: string) =>
      (await s.h.engine.audit.events('acme', id)).map((e) => [e.step, e.detail['action'], e.actor]);
    expect(await changes(route!.id)).toEqual([
      ['route_changed', 'created', 'user:admin@acme.test'],
      ['route_changed', 'updated', 'user:admin@acme.test'],
      ['route_changed', 'updated', 'user:admin@acme.test'],
      ['route_changed', 'deleted', 'user:admin@acme.test'],
    ]);
    expect(await changes('grp_finance')).toEqual([
      ['group_changed', 'created', 'user:admin@acme.test'],
      ['group_changed', 'deleted', 'user:admin@acme.test'],
    ]);
    await page.close();
  });

  it("an escalation reaches the escalation group's open Needs you tab live", async () => {
    const admin = {
      id: 'user:admin@acme.test',
      tenant: 'acme',
      kind: 'operator',
      roles: ['admin'],
    } as const;
    await s.h.engine.groups.save({
      tenant: 'acme',
      name: 'payables',
      members: ['user:viewer@acme.test'],
      actor: admin,
    });
    await s.h.engine.groups.save({ tenant: 'acme', name: 'leads', members: [admin.id], actor: admin });
    const saved = await s.h.engine.routes.save({
      tenant: 'acme',
      actor: admin,
      route: {
        name: 'escalating payments',
        operation: 'invoice.pay',
        group: 'payables',
        escalation: { afterMs: 60_000, group: 'leads', channel: '#leads' },
      },
    });
    expect(saved.kind).toBe('saved');
    const page = await s.context.newPage();
    await s.signIn(page, 'admin');
    await page.goto(`${s.h.url}/?status=needs`);
    const region = page.getByTestId('live-inbox');
    await liveInboxOpen(page);
    await expect.poll(() => streams.open).toBe(1);
    const invoice = freshInvoice(s.h.world, 'acme');
    const p = await proposeViaApi(s.h, 'acme', {
      operation: 'invoice.pay',
      request: { invoice_id: invoice },
      resource: `invoice:${invoice}`,
    });
    // Routed to payables: not the admin's to decide, so not counted in their Needs you.
    await expect.poll(() => region.getAttribute('data-checked'), { timeout: 15_000 }).toBe('1');
    expect(await page.getByTestId('live-notice').count()).toBe(0);
    s.h.clock.advance(60_000);
    expect(await s.h.engine.sweeps.escalateDue()).toBe(1);
    await expect.poll(() => region.getAttribute('data-checked'), { timeout: 15_000 }).toBe('2');
    expect(await region.textContent()).toBe('1 new proposal in this list — reload');
    expect((await s.h.engine.proposals.get('acme', p.id))?.route?.escalatedAt).not.toBeNull();
    // The proposal page says so: in its route and in its timeline.
    await page.goto(`${s.h.url}/proposals/${p.id}`);
    expect(await page.getByTestId('route').textContent()).toContain('escalated to leads');
    expect(await page.getByText('Escalated to the group leads: nobody decided it in time').count()).toBe(1);
    if (saved.kind === 'saved')
      await s.h.engine.routes.delete({ tenant: 'acme', id: saved.route.id, actor: admin });
    await page.close();
    await expect.poll(() => streams.open, { timeout: 15_000 }).toBe(0);
  });

  it('is for admins only: an approver sees no Routing link and is refused the page', async () => {
    const page = await s.context.newPage();
    await s.signIn(page, 'approver');
    expect(await page.getByRole('link', { name: 'Routing' }).count()).toBe(0);
    const response = await page.goto(`${s.h.url}/routing`);
    expect(response?.status()).toBe(403);
    await page.close();
  });
});
