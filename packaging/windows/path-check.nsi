; path.nsh on its own, for packaging/windows/wine-check: a silent installer that adds its folder to the
; writer's Path as Redraft's does, and writes an uninstaller (remove.exe) that takes it out again.
;
;   makensis -DOUTFILE=<path-check.exe> path-check.nsi

Target amd64-unicode
RequestExecutionLevel user
SilentInstall silent
SilentUnInstall silent

!define APP "RedraftPathCheck"
Name "${APP}"
OutFile "${OUTFILE}"
InstallDir "C:\Redraft Path Check"

!include "path.nsh"

Section
  SetOutPath "$INSTDIR"
  WriteUninstaller "$INSTDIR\remove.exe"
  Call RedraftAddToPath
SectionEnd

Section "Uninstall"
  Call un.RedraftRemoveFromPath
  DeleteRegKey HKCU "Software\${APP}"
SectionEnd
