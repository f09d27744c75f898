/**
 * The escalation panel: the chain's steps as a list (add, remove, reorder), the most SMS one incident can send, and a
 * warning for a sender that takes no replies.
 */
import { mostSms, REPEAT_BOUNDS, STEP_BOUNDS, WAIT_BOUNDS } from '../account/escalation';
import { isPhoneNumber, splitNumbers } from '../../gateway/recipients';
import { fillSenderSelect, senderValueText } from './senders';
import { byId } from './panel-fields';
import { t } from './i18n';

interface StepSetting {
  numbers: string;
  wait: number | string;
}

/** Senders a reply can come back to: the system number and a short code. */
const REPLYABLE = new Set(['', 'gSystem', 'gShort']);

const LIST_ID = 'node-input-bulkgate-steps';

function stepProblems(step: StepSetting): string[] {
  const wrong: string[] = [];
  const numbers = splitNumbers(String(step?.numbers ?? ''));
  if (!numbers.length || numbers.some((n) => !isPhoneNumber(n))) wrong.push('bulkgate-step-numbers');
  const wait = Number(step?.wait);
  if (!Number.isInteger(wait) || wait < WAIT_BOUNDS.min || wait > WAIT_BOUNDS.max) wrong.push('bulkgate-step-wait');
  return wrong;
}

/** The node's check (the red triangle): 1 to 10 steps, each with possible numbers and a wait in range. */
export function validSteps(_node: unknown, _kind: string, value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.length >= STEP_BOUNDS.min &&
    value.length <= STEP_BOUNDS.max &&
    value.every((s) => !stepProblems(s as StepSetting).length)
  );
}

function readSteps(): StepSetting[] {
  return [...document.querySelectorAll<HTMLElement>(`#${LIST_ID} .bulkgate-step`)].map((row) => ({
    numbers: (row.querySelector('.bulkgate-step-numbers') as HTMLInputElement).value.trim(),
    wait: Number((row.querySelector('.bulkgate-step-wait') as HTMLInputElement).value),
  }));
}

export function escalationPanel(node: { steps?: unknown; sender_id?: string }): void {
  const list = byId(LIST_ID);
  const cost = byId('bulkgate-escalation-cost');
  const warning = byId('bulkgate-escalation-sender-warning');
  const repeat = byId<HTMLInputElement>('node-input-repeat');
  const sender = byId<HTMLSelectElement>('node-input-sender_id');
  const senderValue = byId<HTMLInputElement>('node-input-sender_id_value');
  fillSenderSelect(sender, '2.0', node.sender_id ?? 'gSystem');
  const refresh = () => {
    const steps = readSteps();
    const rows = [...document.querySelectorAll<HTMLElement>(`#${LIST_ID} .bulkgate-step`)];
    rows.forEach((row, i) => {
      const wrong = stepProblems(steps[i] as StepSetting);
      (row.querySelector('.bulkgate-step-index') as HTMLElement).textContent = t('panel.label.step', { step: i + 1 });
      for (const cls of ['bulkgate-step-numbers', 'bulkgate-step-wait'])
        row.querySelector(`.${cls}`)?.classList.toggle('input-error', wrong.includes(cls));
    });
    const rounds = Number(repeat.value || 1);
    const valid = Number.isInteger(rounds) && rounds >= REPEAT_BOUNDS.min && rounds <= REPEAT_BOUNDS.max;
    const most = mostSms(
      steps.map((s) => ({ numbers: splitNumbers(s.numbers) })),
      valid ? rounds : 1,
    );
    cost.textContent = t('panel.cost', { count: most, steps: steps.length, rounds: valid ? rounds : 1 });
    const labels = senderValueText(sender.value);
    senderValue.closest('.form-row')?.setAttribute('style', labels ? '' : 'display:none');
    if (labels) senderValue.placeholder = labels.placeholder;
    warning.style.display = REPLYABLE.has(sender.value) ? 'none' : '';
  };
  $(list).editableList({
    addButton: t('panel.label.add-step'),
    sortable: true,
    removable: true,
    height: 'auto',
    addItem: (row: unknown, _index: number, data: Partial<StepSetting>) => {
      const container = $(row)[0] as HTMLElement;
      container.classList.add('bulkgate-step');
      const index = Object.assign(document.createElement('span'), { className: 'bulkgate-step-index' });
      const numbers = Object.assign(document.createElement('input'), {
        type: 'text',
        className: 'bulkgate-step-numbers',
        value: data.numbers ?? '',
        placeholder: t('panel.placeholder.numbers'),
      });
      numbers.style.width = '50%';
      const wait = Object.assign(document.createElement('input'), {
        type: 'number',
        className: 'bulkgate-step-wait',
        value: String(data.wait ?? 300),
        min: String(WAIT_BOUNDS.min),
        max: String(WAIT_BOUNDS.max),
      });
      wait.style.width = '90px';
      const unit = Object.assign(document.createElement('span'), { textContent: t('panel.label.wait') });
      container.append(index, ' ', numbers, ' ', unit, ' ', wait);
      for (const el of [numbers, wait]) el.addEventListener('input', refresh);
      refresh();
    },
    removeItem: refresh,
    sortItems: refresh,
  });
  const saved =
    Array.isArray(node.steps) && node.steps.length ? (node.steps as StepSetting[]) : [{ numbers: '', wait: 300 }];
  for (const step of saved) $(list).editableList('addItem', { ...step });
  repeat.addEventListener('input', refresh);
  sender.addEventListener('change', refresh);
  refresh();
}

export function escalationPanelSave(node: { steps?: StepSetting[]; sender_id?: string }): void {
  node.steps = readSteps();
  node.sender_id = byId<HTMLSelectElement>('node-input-sender_id').value || 'gSystem';
}
