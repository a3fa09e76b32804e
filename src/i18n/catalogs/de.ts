import { translation } from '../translation.js';

/** The German messages. */
export const de = translation({
  'handback.pending': 'Wartet auf eine menschliche Entscheidung.',
  'handback.declined': 'Ein Mensch hat den Vorschlag abgelehnt.',
  'handback.declined_note': 'Ein Mensch hat den Vorschlag abgelehnt: {note}',
  'handback.superseded': 'Ein Operator hat ihn bearbeitet; der neue Vorschlag ist {next}.',
  'handback.expired': 'Der Vorschlag ist abgelaufen, bevor ihn jemand genehmigt hat.',
  'handback.executing': 'Der Vorschlag wird gerade ausgeführt.',
  'handback.approved_executing': 'Von einem Menschen genehmigt; die Anwendung führt ihn gerade aus.',
  'handback.granted_executing': 'Durch eine Dauerfreigabe genehmigt; die Anwendung führt ihn gerade aus.',
  'handback.approved_executed': 'Von einem Menschen genehmigt; die Anwendung hat ihn ausgeführt.',
  'handback.granted_executed': 'Durch eine Dauerfreigabe genehmigt; die Anwendung hat ihn ausgeführt.',
  'handback.approved_not_executed': 'Von einem Menschen genehmigt; die Anwendung hat ihn nicht ausgeführt.',
  'handback.granted_not_executed':
    'Durch eine Dauerfreigabe genehmigt; die Anwendung hat ihn nicht ausgeführt.',
  'handback.none': 'In diesem Lauf gibt es noch keine Vorschläge.',
  'handback.line': '- {operation} {proposalId} ({short}): {status}. {text}',
  'handback.intro':
    'Was aus den Vorschlägen geworden ist, die du vorher gemacht hast (von der Anwendung gemeldet, nie von einem Modell):',
  'outcome.succeeded': 'Der genehmigte Vorgang war erfolgreich.',
  'outcome.succeeded_ids': 'Der genehmigte Vorgang war erfolgreich ({identifiers}).',
  'outcome.needs_reconciliation':
    'Der Anbieter hat den Vorgang nicht bestätigt; er wird abgeglichen. Nicht erneut versuchen.',
  'outcome.revision_required': 'Der Vorgang wurde nicht ausgeführt: {reason} Ein neuer Vorschlag ist nötig.',
  'outcome.terminal_failure':
    'Der Vorgang ist fehlgeschlagen und wird nicht wiederholt (Korrelations-ID {correlationId}).',
  'status.pending': 'ausstehend',
  'status.executing': 'wird ausgeführt',
  'status.succeeded': 'erfolgreich',
  'status.needs_reconciliation': 'Abgleich nötig',
  'status.revision_required': 'Überarbeitung nötig',
  'status.terminal_failure': 'endgültig fehlgeschlagen',
  'status.declined': 'abgelehnt',
  'status.superseded': 'ersetzt',
  'status.expired': 'abgelaufen',
});
