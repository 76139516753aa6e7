export { recordScanEvents, createScanAlerts, ruleScanOf, type ScanAlerts, getScanStats, getUnitScans, maintainScanLedger } from './scans.ts';
export { getScanAlertSettings, updateScanAlertSettings, clearSuspectUnit } from './scan-settings.ts';
