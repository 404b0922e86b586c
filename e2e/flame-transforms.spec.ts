import { expect, test, type Page } from './fixtures.ts';
import { nodeExplorer, sampleFiles, sel, urlParam, waitLoaded } from './explorer-helpers.ts';
import { parseTransforms, type FlameTransform } from '../src/core/query/flame-transforms.ts';
import { shots } from './shots.ts';

/**
 * The flame graph's transforms in the page: applied from a node's menu and the drop box, kept in
 * the URL (`tf=`), taken off by Back and put back by Forward, and the same from the URL in a new
 * page. The node counts expected come from the same query engine run in Node over the same files.
 */
const explorer = nodeExplorer(sampleFiles);

async function nodesFor(transforms: FlameTransform[]): Promise<number> {
  const ex = await explorer;
  return ex.flame({ selection: sel(), mode: 'top-down', weight: 'occurrences', focus: null, highlightStack: null, transforms }).tree.parent.length;
}

const transformsInUrl = (page: Page) => parseTransforms(urlParam(page, 'tf') ?? '');

test('a transform from a node’s menu and one from the drop box: in the URL, off with Back, on with Forward, the same in a new page', async ({
  page,
  context,
}) => {
  await page.goto('/');
  await waitLoaded(page);
  const crumbs = page.getByTestId('flame-transforms');
  const main = page.getByTestId('flame-main');
  await expect(crumbs).toHaveAttribute('data-count', '0');

  // the first node under "all": focus on its subtree
  const menu = page.getByTestId('context-menu');
  await main.locator('canvas').click({ button: 'right', position: { x: 30, y: 18 + 9 } });
  await expect(menu).toBeVisible();
  const fn = (await menu.locator('.context-title').textContent())!.replace(/\+0x[0-9a-f]+$/, '');
  await menu.getByTestId('menu-transform-focus').click();
  await expect(crumbs).toHaveAttribute('data-count', '1');
  await expect.poll(() => transformsInUrl(page)).toEqual([{ kind: 'focus', fn }]);
  const one: FlameTransform[] = [{ kind: 'focus', fn }];
  await expect(main).toHaveAttribute('data-nodes', String(await nodesFor(one)));

  // drop the syscall entry frame by pattern
  const two: FlameTransform[] = [...one, { kind: 'drop', pattern: '/^do_syscall_64$/' }];
  await page.getByTestId('flame-drop').fill('/^do_syscall_64$/');
  await page.getByTestId('flame-drop').press('Enter');
  await expect(crumbs).toHaveAttribute('data-count', '2');
  await expect.poll(() => transformsInUrl(page)).toEqual(two);
  await expect(main).toHaveAttribute('data-nodes', String(await nodesFor(two)));
  await expect(crumbs.getByTestId('flame-transform')).toHaveText([`focus: ${fn}×`, 'drop: /^do_syscall_64$/×']);
  const pane = page.getByRole('region', { name: 'flame graph' });
  await shots(page, 'flame-transforms', { at: pane });

  // Back: one transform off, then the other
  await page.goBack();
  await expect(crumbs).toHaveAttribute('data-count', '1');
  await expect(main).toHaveAttribute('data-nodes', String(await nodesFor(one)));
  await shots(page, 'flame-transforms-back', { at: pane });
  await page.goBack();
  await expect(crumbs).toHaveAttribute('data-count', '0');
  expect(urlParam(page, 'tf')).toBeNull();
  // Forward: both again
  await page.goForward();
  await page.goForward();
  await expect(crumbs).toHaveAttribute('data-count', '2');
  await expect(main).toHaveAttribute('data-nodes', String(await nodesFor(two)));

  // the URL in a new page draws the same
  const other = await context.newPage();
  await other.goto(page.url());
  await waitLoaded(other);
  await expect(other.getByTestId('flame-transforms')).toHaveAttribute('data-count', '2');
  await expect(other.getByTestId('flame-main')).toHaveAttribute('data-nodes', String(await nodesFor(two)));

  // a chip's ×: that transform and the ones after it go
  await page.getByTestId('flame-transform').first().getByRole('button').click();
  await expect(crumbs).toHaveAttribute('data-count', '0');
  await expect.poll(() => urlParam(page, 'tf')).toBeNull();
});
